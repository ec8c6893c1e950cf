//! `flashbuf`: the lab's command line (design.md §7); the commands live in the library
//! (`src/lib.rs`), shared with the Python package.

fn main() -> std::process::ExitCode {
    flashbuf_cli::main()
}

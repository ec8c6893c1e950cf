//! What a benchmark figure needs beside the number: the commit and build it came from and
//! the machine it ran on. `flashbuf bench --json` and the criterion benches record it with
//! every figure.

use serde::Serialize;

/// The build and the machine.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BuildInfo {
    /// Commit of the checkout the binary was built in, read at run time (`-dirty` if
    /// tracked files differ from it; `unknown` outside a git checkout or without git).
    pub commit: String,
    /// Compiler version.
    pub rustc: &'static str,
    /// Cargo profile of this crate's build (`release`, `debug`).
    pub profile: &'static str,
    /// Logical CPUs available to the process.
    pub cpus: usize,
    /// CPU model (`/proc/cpuinfo`), empty where unknown.
    pub cpu_model: String,
    /// Physical memory in bytes (`/proc/meminfo`), 0 where unknown.
    pub memory_bytes: u64,
    /// Operating system and architecture.
    pub os: String,
    /// Seconds since the Unix epoch when this was taken.
    pub unix_time_s: u64,
}

impl BuildInfo {
    /// The current build and machine.
    pub fn now() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_bytes = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib.saturating_mul(1024));
        Self {
            commit: commit(),
            rustc: env!("FLASHBUF_RUSTC"),
            profile: env!("FLASHBUF_PROFILE"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            memory_bytes,
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            unix_time_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// Records a benchmark's configuration with the build and machine: prints
    /// [`Self::line`] on stderr and writes `{"build": …, "config": config}` to
    /// `target/criterion/flashbuf-NAME.json` of the workspace (beside criterion's figures);
    /// a write failure is reported on stderr, never fatal to the benchmark.
    pub fn record_bench(name: &str, config: serde_json::Value) {
        let b = Self::now();
        eprintln!("{name}: {}", b.line());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/criterion");
        let doc = serde_json::json!({ "build": b, "config": config });
        let path = dir.join(format!("flashbuf-{name}.json"));
        if let Err(e) =
            std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, format!("{doc:#}\n")))
        {
            eprintln!(
                "{name}: could not record the configuration in {}: {e}",
                path.display()
            );
        }
    }

    /// One line for the top of a benchmark's output.
    pub fn line(&self) -> String {
        format!(
            "commit {} ({} build, {}), {} CPUs ({}), {:.1} GiB, {}",
            self.commit,
            self.profile,
            self.rustc,
            self.cpus,
            if self.cpu_model.is_empty() {
                "model unknown"
            } else {
                &self.cpu_model
            },
            self.memory_bytes as f64 / f64::from(1u32 << 30),
            self.os
        )
    }
}

/// The commit of the checkout at `CARGO_MANIFEST_DIR` (see [`BuildInfo::commit`]).
fn commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        None => "unknown".to_string(),
        Some(hash) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_and_machine_are_known() {
        let b = BuildInfo::now();
        assert!(!b.commit.is_empty() && !b.rustc.is_empty());
        assert!(b.rustc.starts_with("rustc "), "{}", b.rustc);
        assert!(b.cpus >= 1);
        if cfg!(target_os = "linux") {
            assert!(b.memory_bytes > 0);
        }
        assert!(b.line().contains(&b.commit));
    }
}

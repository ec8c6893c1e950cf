//! Golden rows shared by the golden tests: a file of `key<TAB>value` lines per kind
//! (`ftls.golden`, `devices.golden`), compared row by row; `FLASHBUF_REGEN_GOLDEN=1`
//! rewrites the file from what the test measured.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Checks `got` (key to row) against `tests/golden/<file>`, or rewrites the file when
/// `FLASHBUF_REGEN_GOLDEN` is set. A key without a row fails naming it and `regen`, the
/// command that generates it.
pub fn check_rows(file: &str, regen: &str, got: &BTreeMap<String, String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file);
    if std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some() {
        let mut text = format!("# Golden rows (key<TAB>row). Regenerate with\n# {regen}\n");
        for (k, v) in got {
            text += &format!("{k}\t{v}\n");
        }
        std::fs::write(&path, text).expect("write golden file");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let want: BTreeMap<&str, &str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .collect();
    for (k, v) in got {
        match want.get(k.as_str()) {
            None => panic!(
                "no golden row for '{k}' in {}; generate it with `{regen}` and review the diff",
                path.display()
            ),
            Some(w) => assert_eq!(v, w, "'{k}' differs from its golden row in {file}"),
        }
    }
}

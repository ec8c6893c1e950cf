//! Tests of the spec grammar and the option schemas.

use super::*;

const SCHEMA: &[OptionSpec] = &[
    OptionSpec {
        key: "window",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.5"),
        help: "priority window",
    },
    OptionSpec {
        key: "n",
        kind: OptKind::UInt { min: 1, max: 100 },
        default: None,
        help: "n",
    },
    OptionSpec {
        key: "inner",
        kind: OptKind::Choice(&["lru", "fifo"]),
        default: Some("lru"),
        help: "inner",
    },
    OptionSpec {
        key: "r",
        kind: OptKind::FloatOr {
            min: 0.0,
            max: 1e9,
            words: &["online"],
        },
        default: None,
        help: "r",
    },
    OptionSpec {
        key: "size",
        kind: OptKind::Bytes {
            min: 1,
            max: u64::MAX,
        },
        default: Some("4MiB"),
        help: "size",
    },
];

fn plain(t: &str) -> Spec {
    Spec::parse(t, |_| false).unwrap()
}

#[test]
fn parses_names_args_and_options() {
    let pos = |n: &str| n == "file" || n == "sim";
    let s = Spec::parse("file:/tmp/a:b/store:direct=true", pos).unwrap();
    assert_eq!(s.arg.as_deref(), Some("/tmp/a:b/store"));
    assert_eq!(s.opts["direct"], "true");
    let s = Spec::parse("file:/tmp/x=y", pos).unwrap();
    assert_eq!(s.arg.as_deref(), Some("/tmp/x=y"));
    assert_eq!(plain("cfdc:window=0.5").to_string(), "cfdc:window=0.5");
    assert!(Spec::parse("lru:x", |_| false).is_err());
    assert!(Spec::parse("lru:a=1,a=2", |_| false).is_err());
    assert!(Spec::parse(":a=1", |_| false).is_err());
}

#[test]
fn validates_types_ranges_and_defaults() {
    let o = Options::validate(&plain("x:window=0.25,r=online"), SCHEMA).unwrap();
    assert_eq!(o.f64("window"), Some(0.25));
    assert_eq!(o.word("inner"), Some("lru"));
    assert_eq!(o.word("r"), Some("online"));
    assert_eq!(o.f64("r"), None);
    assert_eq!(o.u64("n"), None);
    assert_eq!(o.bytes("size"), Some(4 << 20));
    assert!(o.given("window") && !o.given("inner"));
    let o = Options::validate(&plain("x:r=136"), SCHEMA).unwrap();
    assert_eq!(o.f64("r"), Some(136.0));

    let e = Options::validate(&plain("cfdc:windw=0.5"), SCHEMA).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("unknown option 'windw'") && m.contains("window, n"),
        "{m}"
    );
    let e = Options::validate(&plain("x:window=1.5"), SCHEMA).unwrap_err();
    assert!(e.to_string().contains("a number in [0, 1]"), "{e}");
    let e = Options::validate(&plain("x:inner=mru"), SCHEMA).unwrap_err();
    assert!(e.to_string().contains("one of lru, fifo"), "{e}");
    let e = Options::validate(&plain("x:n=0"), SCHEMA).unwrap_err();
    assert!(e.to_string().contains("[1, 100]"), "{e}");
    assert!(Options::validate(&plain("x:window=NaN"), SCHEMA).is_err());
    Options::check_schema(SCHEMA).unwrap();
}

#[test]
fn lists_split_between_components_only() {
    assert_eq!(
        Spec::split_list("sim:mtron:seed=7,precondition=true,memory,cost:read_us=1,write_us=2"),
        vec![
            "sim:mtron:seed=7,precondition=true",
            "memory",
            "cost:read_us=1,write_us=2"
        ]
    );
    assert_eq!(Spec::split_list("lru, cfdc ,"), vec!["lru", "cfdc"]);
}

#[test]
fn byte_sizes() {
    assert_eq!(parse_bytes("512k"), Ok(512 * 1024));
    assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
    assert!(parse_bytes("99999999999999999999").is_err());
    assert!(parse_bytes("18446744073709551615G").is_err());
}

#[test]
fn lookup_lists_names() {
    let t = ["lru", "cfdc"];
    let e = lookup("policy", &t, "lruu", |e| e).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown policy 'lruu'; valid names: lru, cfdc"
    );
}

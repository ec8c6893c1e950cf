//! Sweeps written on the command line: lists and ranges of buffer sizes, and parameter
//! grids inside component names.
//!
//! - Buffer sizes: `0.01,0.03` (a list), `0.01..0.1/5` (5 sizes spaced evenly on a log
//!   scale, both ends included); pages the same way (`100..10000/5`, rounded to whole
//!   pages, duplicates dropped).
//! - Grids: an option value `A..B/N` (N values spaced evenly, both ends included; whole
//!   numbers if both ends are) or `X|Y|Z` (those values) makes one component per value;
//!   several such options make their product: `cfdc:window=0.25..0.75/3,cluster_size=32|64`
//!   is six policies.

use crate::spec::Spec;
use crate::LabError;

/// Most values one range or grid may produce (a typo such as `/10000` is refused).
pub const MAX_POINTS: usize = 1000;

/// A range `A..B/N`: its ends and number of points, if `text` is one.
fn range(text: &str) -> Result<Option<(&str, &str, usize)>, LabError> {
    let Some((ends, n)) = text.split_once('/') else {
        if text.contains("..") {
            return Err(LabError::Usage(format!(
                "'{text}': a range needs its number of points, as in 0.25..0.75/3"
            )));
        }
        return Ok(None);
    };
    let Some((a, b)) = ends.split_once("..") else {
        return Ok(None);
    };
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| LabError::Usage(format!("'{text}': '{n}' is not a whole number of points")))?;
    if !(2..=MAX_POINTS).contains(&n) {
        return Err(LabError::Usage(format!(
            "'{text}': a range has 2 to {MAX_POINTS} points"
        )));
    }
    Ok(Some((a.trim(), b.trim(), n)))
}

fn number(text: &str, whole: &str) -> Result<f64, LabError> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| LabError::Usage(format!("'{whole}': '{text}' is not a number")))
}

/// Buffer sizes from one flag value: a comma list of numbers or ranges, ranges spaced on a
/// log scale (sizes are compared on one). Each value is checked by `check`.
pub fn sizes(
    text: &str,
    check: impl Fn(f64) -> Result<f64, LabError>,
) -> Result<Vec<f64>, LabError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match range(part)? {
            None => out.push(check(number(part, part)?)?),
            Some((a, b, n)) => {
                let (a, b) = (check(number(a, part)?)?, check(number(b, part)?)?);
                let (la, lb) = (a.ln(), b.ln());
                for i in 0..n {
                    let x = (la + (lb - la) * i as f64 / (n - 1) as f64).exp();
                    out.push(x);
                }
            }
        }
    }
    if out.is_empty() {
        return Err(LabError::Usage(format!("'{text}' names no size")));
    }
    Ok(out)
}

/// The values of one option: itself, or those of its range or list.
fn option_values(v: &str) -> Result<Vec<String>, LabError> {
    if let Some((a, b, n)) = range(v)? {
        let (x, y) = (number(a, v)?, number(b, v)?);
        let whole = a.parse::<i64>().is_ok() && b.parse::<i64>().is_ok();
        let mut vals: Vec<String> = (0..n)
            .map(|i| {
                let t = x + (y - x) * i as f64 / (n - 1) as f64;
                if whole {
                    format!("{}", t.round() as i64)
                } else {
                    // Shortest text that reads back as the value (0.5, not 0.5000000001).
                    let r = (t * 1e9).round() / 1e9;
                    format!("{r}")
                }
            })
            .collect();
        vals.dedup();
        return Ok(vals);
    }
    if v.contains('|') {
        let vals: Vec<String> = v.split('|').map(|s| s.trim().to_string()).collect();
        if vals.iter().any(String::is_empty) {
            return Err(LabError::Usage(format!("'{v}': an empty alternative")));
        }
        return Ok(vals);
    }
    Ok(vec![v.to_string()])
}

/// Expands the grids in `spec`'s options into one spec per combination (the spec itself
/// if it has none), options taken in key order, the last varying fastest.
pub fn expand(spec: &Spec) -> Result<Vec<Spec>, LabError> {
    let mut out = vec![spec.clone()];
    for (k, v) in &spec.opts {
        let vals = option_values(v)?;
        if vals.len() == 1 && vals[0] == *v {
            continue;
        }
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for s in &out {
            for x in &vals {
                let mut t = s.clone();
                t.opts.insert(k.clone(), x.clone());
                next.push(t);
            }
        }
        if next.len() > MAX_POINTS {
            return Err(LabError::Usage(format!(
                "'{spec}': the grid makes more than {MAX_POINTS} components"
            )));
        }
        out = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(x: f64) -> Result<f64, LabError> {
        Ok(x)
    }

    #[test]
    fn size_lists_and_log_ranges() {
        assert_eq!(sizes("0.01,0.03", ok).unwrap(), vec![0.01, 0.03]);
        let v = sizes("0.01..1/3", ok).unwrap();
        assert_eq!(v.len(), 3);
        assert!(
            (v[1] - 0.1).abs() < 1e-12 && (v[2] - 1.0).abs() < 1e-12,
            "{v:?}"
        );
        assert!(sizes("0.01..0.1", ok)
            .unwrap_err()
            .to_string()
            .contains("number of points"));
        assert!(sizes("0.01..0.1/1", ok).is_err());
        assert!(sizes("x", ok)
            .unwrap_err()
            .to_string()
            .contains("'x' is not a number"));
        let refuse = |x: f64| {
            if x > 0.0 {
                Ok(x)
            } else {
                Err(LabError::Usage(format!("{x} is not above 0")))
            }
        };
        assert!(sizes("0.1,-1", refuse)
            .unwrap_err()
            .to_string()
            .contains("-1"));
    }

    #[test]
    fn grids_make_the_product_of_their_options() {
        let s = crate::spec::parse("cfdc:window=0.25..0.75/3,cluster_size=32|64").unwrap();
        let v: Vec<String> = expand(&s)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(v.len(), 6, "{v:?}");
        for w in ["0.25", "0.5", "0.75"] {
            for c in ["32", "64"] {
                assert!(
                    v.iter().any(|x| x.contains(&format!("window={w}"))
                        && x.contains(&format!("cluster_size={c}"))),
                    "{w} {c} in {v:?}"
                );
            }
        }
        let whole = crate::spec::parse("cfdc:cluster_size=16..64/4").unwrap();
        let v: Vec<String> = expand(&whole)
            .unwrap()
            .iter()
            .map(|s| s.opts["cluster_size"].clone())
            .collect();
        assert_eq!(v, ["16", "32", "48", "64"]);
        let plain = crate::spec::parse("lru").unwrap();
        assert_eq!(expand(&plain).unwrap(), vec![plain]);
        let bad = crate::spec::parse("cfdc:window=0.1..0.9/5000").unwrap();
        assert!(expand(&bad)
            .unwrap_err()
            .to_string()
            .contains("2 to 1000 points"));
    }
}

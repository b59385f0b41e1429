//! Values given as text: load and capacity lists (`5,0,3`, or the contents of a file), any
//! comma-separated list, and numbers within a range. A bad value is named by its position and
//! shown shortened, never echoed whole, so that a face can report it on one line.
//!
//! ```
//! use hetlb_core::input::{ListError, loads, split_inline};
//! assert_eq!(loads(&split_inline("5,0, 3")).unwrap(), vec![5, 0, 3]);
//! let e = loads(&split_inline("1,-2")).unwrap_err();
//! assert_eq!(e.to_string(), "value 2 ('-2') is negative");
//! assert_eq!(loads(&[]).unwrap_err(), ListError::Empty);
//! ```

use std::str::FromStr;
use thiserror::Error;

/// A list that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ListError {
    /// Nothing in the list.
    #[error("no values given")]
    Empty,
    /// A value that is not what the list holds.
    #[error("value {position} ('{shown}') {why}")]
    Value {
        /// Its position, from 1.
        position: usize,
        /// The value, shortened ([`shorten`]).
        shown: String,
        /// What is wrong (`is negative`, `is not a number`).
        why: String,
    },
    /// A value its parser refused, with the parser's message (which for names lists the
    /// valid ones).
    #[error("value {position} ('{shown}'): {message}")]
    Parse {
        /// Its position, from 1.
        position: usize,
        /// The value, shortened ([`shorten`]).
        shown: String,
        /// The parser's message.
        message: String,
    },
}

/// A file of values that is not a list.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// It starts as a JSON array but is not one of numbers.
    #[error("not a JSON array of numbers")]
    Json(#[source] serde_json::Error),
}

/// The items of an inline list: values separated by commas or spaces.
pub fn split_inline(spec: &str) -> Vec<String> {
    spec.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The items of a loads or capacities file's `text`: a JSON array, or values separated by
/// commas, spaces, tabs or lines, `#` starting a comment.
///
/// # Errors
/// [`FileError::Json`] for text that starts with `[` but is not a JSON array.
///
/// ```
/// use hetlb_core::input::file_values;
/// assert_eq!(file_values("4\n# c\n7, 0\n").unwrap(), ["4", "7", "0"]);
/// assert_eq!(file_values("[1, 2]").unwrap(), ["1", "2"]);
/// ```
pub fn file_values(text: &str) -> Result<Vec<String>, FileError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let values: Vec<serde_json::Value> =
            serde_json::from_str(trimmed).map_err(FileError::Json)?;
        return Ok(values
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect());
    }
    Ok(text
        .lines()
        .flat_map(|l| l.split('#').next().unwrap_or("").split([',', ' ', '\t']))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect())
}

/// Loads: whole numbers of units, none negative.
///
/// # Errors
/// [`ListError::Empty`], or [`ListError::Value`] naming the first bad value and why.
pub fn loads(items: &[String]) -> Result<Vec<u64>, ListError> {
    if items.is_empty() {
        return Err(ListError::Empty);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            load(item).map_err(|why| ListError::Value {
                position: i + 1,
                shown: shorten(item),
                why: why.to_string(),
            })
        })
        .collect()
}

/// Capacities: numbers (whether each is positive and finite is for
/// [`Capacities`](crate::Capacities) to check).
///
/// # Errors
/// [`ListError::Empty`], or [`ListError::Value`] naming the first value that is not a number.
pub fn capacities(items: &[String]) -> Result<Vec<f64>, ListError> {
    if items.is_empty() {
        return Err(ListError::Empty);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.parse::<f64>().map_err(|_| ListError::Value {
                position: i + 1,
                shown: shorten(item),
                why: "is not a number".into(),
            })
        })
        .collect()
}

/// A comma-separated list of `T`. A bad item is reported with its position and either `what`
/// it should be (`is not a matrix order`) or, when `what` is `None`, the parser's message.
///
/// # Errors
/// [`ListError::Empty`], [`ListError::Value`] (with `what`) or [`ListError::Parse`].
///
/// ```
/// use hetlb_core::input::list;
/// assert_eq!(list::<u32>("8, 16", None).unwrap(), vec![8, 16]);
/// let e = list::<u32>("8,x", Some("a size")).unwrap_err();
/// assert_eq!(e.to_string(), "value 2 ('x') is not a size");
/// ```
pub fn list<T>(spec: &str, what: Option<&str>) -> Result<Vec<T>, ListError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let items: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(ListError::Empty);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.parse::<T>().map_err(|e| match what {
                Some(what) => ListError::Value {
                    position: i + 1,
                    shown: shorten(s),
                    why: format!("is not {what}"),
                },
                None => ListError::Parse {
                    position: i + 1,
                    shown: shorten(s),
                    message: e.to_string(),
                },
            })
        })
        .collect()
}

/// `values` with every repeat dropped (the first kept), and the dropped values.
///
/// ```
/// let (kept, dropped) = hetlb_core::input::dedup(vec![8, 16, 8]);
/// assert_eq!((kept, dropped), (vec![8, 16], vec![8]));
/// ```
pub fn dedup<T: PartialEq>(values: Vec<T>) -> (Vec<T>, Vec<T>) {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    let mut dropped = Vec::new();
    for v in values {
        if kept.contains(&v) {
            dropped.push(v);
        } else {
            kept.push(v);
        }
    }
    (kept, dropped)
}

/// At most 40 characters of `text`, `…` marking a cut: a bad value from a file is named, not
/// echoed whole.
pub fn shorten(text: &str) -> String {
    const SHOWN: usize = 40;
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn load(item: &str) -> Result<u64, &'static str> {
    if let Some(magnitude) = item.strip_prefix('-') {
        return Err(if magnitude.parse::<f64>().is_ok() {
            "is negative"
        } else {
            "is not a number"
        });
    }
    match item.parse::<u64>() {
        Ok(v) => Ok(v),
        Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) => {
            Err("is larger than 18446744073709551615")
        }
        Err(_) if item.parse::<f64>().is_ok_and(|x| x.is_finite()) => {
            Err("is not a whole number of units")
        }
        Err(_) => Err("is not a non-negative integer"),
    }
}

/// A parser of a whole number in `min..=max` (underscores allowed): negative numbers parse,
/// and a value outside the range is refused with the range in the message.
///
/// ```
/// let p = hetlb_core::input::whole::<u64>(1, 20_000);
/// assert_eq!(p("20_000"), Ok(20_000));
/// assert_eq!(p("-1").unwrap_err(), "-1 is out of range: allowed 1 to 20000");
/// ```
pub fn whole<T>(min: T, max: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: TryFrom<i128> + TryInto<i128> + Copy + std::fmt::Display + Send + Sync + 'static,
{
    move |s: &str| {
        let lo: i128 = min.try_into().unwrap_or(i128::MIN);
        let hi: i128 = max.try_into().unwrap_or(i128::MAX);
        let v: i128 = s
            .trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("'{s}' is not a whole number (allowed {min} to {max})"))?;
        if v < lo || v > hi {
            return Err(format!("{s} is out of range: allowed {min} to {max}"));
        }
        T::try_from(v).map_err(|_| format!("{s} is out of range: allowed {min} to {max}"))
    }
}

/// A parser of a finite number in `min..=max` (`min` excluded when `open_min`).
///
/// ```
/// let p = hetlb_core::input::real(0.0, 1e6, true);
/// assert_eq!(p("2.5"), Ok(2.5));
/// assert_eq!(p("0").unwrap_err(), "0 is out of range: allowed above 0 to 1000000");
/// ```
pub fn real(
    min: f64,
    max: f64,
    open_min: bool,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s: &str| {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a number"))?;
        let above = if open_min { v > min } else { v >= min };
        if !(v.is_finite() && above && v <= max) {
            let low = if open_min { "above" } else { "from" };
            return Err(format!("{s} is out of range: allowed {low} {min} to {max}"));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Vec<u64>, String> {
        loads(&split_inline(s)).map_err(|e| e.to_string())
    }

    #[test]
    fn inline_lists_and_their_errors() {
        assert_eq!(parse("5,0, 3").unwrap(), vec![5, 0, 3]);
        assert_eq!(parse("1,-2").unwrap_err(), "value 2 ('-2') is negative");
        assert_eq!(
            parse("1,2.5").unwrap_err(),
            "value 2 ('2.5') is not a whole number of units"
        );
        assert_eq!(
            parse("x").unwrap_err(),
            "value 1 ('x') is not a non-negative integer"
        );
        assert_eq!(parse("").unwrap_err(), "no values given");
        assert!(
            parse("99999999999999999999")
                .unwrap_err()
                .contains("larger than")
        );
        assert!(capacities(&split_inline("1,nan,2")).unwrap()[1].is_nan());
        assert!(capacities(&split_inline("1,two")).is_err());
        let long = format!("1,{}", "x".repeat(2000));
        let e = parse(&long).unwrap_err();
        assert!(e.len() < 100 && e.contains("value 2"), "{e}");
    }

    #[test]
    fn ranged_values_say_their_range() {
        let p = whole::<u64>(1, 20_000);
        assert_eq!(p("20000"), Ok(20_000));
        assert!(
            p("18446744073709551615")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(p("1e3").unwrap_err().contains("not a whole number"));
        let t = real(0.0, 1e6, true);
        for bad in ["0", "-3", "1e300", "inf", "nan"] {
            assert!(t(bad).unwrap_err().contains("out of range"), "{bad}");
        }
    }

    #[test]
    fn files_of_lines_or_json() {
        assert_eq!(
            file_values("4, 7\n0 9\t2 # comment\n").unwrap(),
            ["4", "7", "0", "9", "2"]
        );
        assert_eq!(file_values("[1, \"2\", -3]").unwrap(), ["1", "2", "-3"]);
        assert!(matches!(file_values("[1, "), Err(FileError::Json(_))));
    }

    #[test]
    fn repeated_values_run_once() {
        assert_eq!(dedup(vec!["a", "b"]), (vec!["a", "b"], vec![]));
        assert_eq!(
            list::<u32>("8,16,8", None).map(dedup).unwrap().0,
            vec![8, 16]
        );
        assert!(matches!(
            list::<u32>("8,y", None),
            Err(ListError::Parse { position: 2, .. })
        ));
    }
}

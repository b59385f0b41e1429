//! User-supplied numbers: inline lists and `@file` references, parsed by
//! [`hetlb_core::input`]; every error names the option it came from (`--loads: ...`), so
//! `main` can print it as the one line `error: --loads: ...`.

use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::input::{self as parse, ListError};
use std::path::Path;

pub use hetlb_core::input::{real, whole};

/// What `--backend mpi` says in a build without MPI.
pub const NO_MPI: &str = "--backend: this hetlb was built without MPI support; rebuild with \
    `cargo build --release -p hetlb-cli --features mpi` and launch it with mpiexec";

/// Reads `--backend`: `threads` (false) or `mpi` (true, in a build with MPI).
pub fn mpi_backend(backend: &str) -> Result<bool> {
    match backend {
        "threads" => Ok(false),
        "mpi" if cfg!(feature = "mpi") => Ok(true),
        "mpi" => bail!("{NO_MPI}"),
        other => bail!("--backend: unknown backend '{other}' (expected threads or mpi)"),
    }
}

/// `e` as one line naming `option`.
fn named(option: &str) -> impl Fn(ListError) -> anyhow::Error + '_ {
    move |e| anyhow!("{option}: {e}")
}

/// Parses `--loads`: `5,0,3`, or `@path` to a file of one integer per line or a JSON array.
pub fn parse_loads(spec: &str, option: &str) -> Result<Vec<u64>> {
    parse::loads(&items(spec, option)?).map_err(named(option))
}

/// Parses `--capacities`: `1,2.5,…` or `@path`; each must be positive and finite (checked by
/// the core's `Capacities`).
pub fn parse_capacities(spec: &str, option: &str) -> Result<Vec<f64>> {
    parse::capacities(&items(spec, option)?).map_err(named(option))
}

/// The values of a list option given as several words (`--loads 4 7 0 9`) or one
/// comma-separated word (`--loads 4,7,0,9`), as one comma-separated list (`4, 7` split by
/// the shell into `4,` and `7` too).
pub fn joined(words: &[String]) -> String {
    words
        .iter()
        .map(|w| w.trim_matches(|c: char| c == ',' || c.is_whitespace()))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses a comma-separated list for `option`. A bad item is reported with its position and
/// either `what` it should be or, when `what` is `None`, the parser's own message (which for
/// names lists the valid ones).
pub fn parse_list<T>(spec: &str, option: &str, what: Option<&str>) -> Result<Vec<T>>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    parse::list(spec, what).map_err(named(option))
}

/// Like [`parse_list`], with every value given twice kept once (the first), and a note on
/// stderr naming what was dropped: a repeated value would only repeat work.
pub fn parse_unique<T>(spec: &str, option: &str, what: Option<&str>) -> Result<Vec<T>>
where
    T: std::str::FromStr + PartialEq + std::fmt::Display,
    T::Err: std::fmt::Display,
{
    Ok(unique(parse_list(spec, option, what)?, option))
}

/// `values` with repeats dropped (the first kept), and a note on stderr naming them.
pub fn unique<T: PartialEq + std::fmt::Display>(values: Vec<T>, option: &str) -> Vec<T> {
    let (kept, dropped) = parse::dedup(values);
    if !dropped.is_empty() {
        let dropped: Vec<String> = dropped.iter().map(ToString::to_string).collect();
        eprintln!(
            "note: {option}: {} given more than once; each runs once",
            dropped.join(", ")
        );
    }
    kept
}

/// Splits an inline list or reads a file given as `@path`.
fn items(spec: &str, option: &str) -> Result<Vec<String>> {
    match spec.strip_prefix('@') {
        Some(path) => read_items(Path::new(path), option)
            .with_context(|| format!("{option}: cannot read '{path}'")),
        None => Ok(parse::split_inline(spec)),
    }
}

/// The largest input file read, in bytes (1 GiB): a larger one is refused instead of filling
/// the memory.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Opens `path` for reading if it is a regular file of at most `max` bytes (the library's
/// one bounded reader: a FIFO, a device or a directory is refused before it is opened).
pub fn open_regular(path: &Path, max: u64) -> Result<std::fs::File> {
    Ok(hetlb_core::text_file::open_regular(path, max)?.0)
}

/// Reads a regular text file of at most [`MAX_FILE_BYTES`] whose contents, parsed, take about
/// `factor` times its size (refused above `--max-memory`, naming `option`). A leading UTF-8
/// byte-order mark is dropped.
pub fn read_text(path: &Path, option: &str, factor: u64) -> Result<String> {
    use std::io::Read;
    let file = open_regular(path, MAX_FILE_BYTES)?;
    let size = file.metadata().map_or(0, |m| m.len());
    crate::limits::check(
        option,
        &format!("reading '{}' ({size} bytes)", path.display()),
        u128::from(size) * u128::from(factor.max(1)),
    )?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        bail!("larger than {} MiB", MAX_FILE_BYTES >> 20);
    }
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        text = rest.to_string();
    }
    Ok(text)
}

/// The values of a loads or capacities file ([`hetlb_core::input::file_values`]).
fn read_items(path: &Path, option: &str) -> Result<Vec<String>> {
    // Every value (8 bytes, and its text while parsing) from a file of about 2 bytes a value.
    let text = read_text(path, option, 16)?;
    Ok(parse::file_values(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_commas_make_one_list() {
        let w = |v: &[&str]| joined(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(w(&["4", "7", "0", "9"]), "4,7,0,9");
        assert_eq!(w(&["4,7,0,9"]), "4,7,0,9");
        assert_eq!(w(&["4,", "7"]), "4,7");
        assert_eq!(w(&["@file.txt"]), "@file.txt");
    }

    #[test]
    fn inline_lists_and_their_errors() {
        assert_eq!(parse_loads("5,0, 3", "--loads").unwrap(), vec![5, 0, 3]);
        let err = |s| parse_loads(s, "--loads").unwrap_err().to_string();
        assert_eq!(err("1,-2"), "--loads: value 2 ('-2') is negative");
        assert_eq!(
            err("1,2.5"),
            "--loads: value 2 ('2.5') is not a whole number of units"
        );
        assert_eq!(
            err("x"),
            "--loads: value 1 ('x') is not a non-negative integer"
        );
        assert_eq!(err(""), "--loads: no values given");
        assert!(err("99999999999999999999").contains("larger than"));
        assert!(err("@/nonexistent/file").starts_with("--loads: cannot read"));
        assert!(parse_capacities("1,nan,2", "--capacities").unwrap()[1].is_nan());
        assert!(parse_capacities("1,two", "--capacities").is_err());
    }

    #[test]
    fn files_of_lines_or_json() {
        let dir = std::env::temp_dir().join(format!("hetlb-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines = dir.join("loads.txt");
        std::fs::write(&lines, "4\n# comment\n7\n\n0\n").unwrap();
        let json = dir.join("loads.json");
        std::fs::write(&json, "[1, 2, 3, 4]").unwrap();
        assert_eq!(
            parse_loads(&format!("@{}", lines.display()), "--loads").unwrap(),
            vec![4, 7, 0]
        );
        assert_eq!(
            parse_loads(&format!("@{}", json.display()), "--loads").unwrap(),
            vec![1, 2, 3, 4]
        );
        std::fs::write(&json, "[1, -2]").unwrap();
        assert!(parse_loads(&format!("@{}", json.display()), "--loads").is_err());
        // Commas and spaces as on the command line, and a byte-order mark, are read.
        std::fs::write(&lines, "\u{feff}4, 7\n0 9\t2 # comment\n").unwrap();
        assert_eq!(
            parse_loads(&format!("@{}", lines.display()), "--loads").unwrap(),
            vec![4, 7, 0, 9, 2]
        );
        // A bad value is named, not echoed whole.
        std::fs::write(&lines, format!("1\n{}\n", "x".repeat(2000))).unwrap();
        let e = format!(
            "{:#}",
            parse_loads(&format!("@{}", lines.display()), "--loads").unwrap_err()
        );
        assert!(e.len() < 200 && e.contains("value 2"), "{e}");
        // Devices and directories are refused before anything is read.
        for special in ["/dev/zero", "/dev/null", "/"] {
            if std::path::Path::new(special).exists() {
                let e = format!(
                    "{:#}",
                    parse_loads(&format!("@{special}"), "--loads").unwrap_err()
                );
                assert!(e.contains("regular files only"), "{special}: {e}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A FIFO is refused at once, where opening it would wait for a writer forever.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("hetlb-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("loads");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = format!(
                "{:#}",
                parse_loads(&format!("@{}", fifo.display()), "--loads").unwrap_err()
            );
            assert!(e.contains("FIFO"), "{e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! Scenario errors that name the field and the line.

use thiserror::Error;

/// What is wrong with a scenario, and where.
///
/// Displayed as one line: `field: message (line N)`.
///
/// # Example
/// ```
/// use hetlb_sim::Scenario;
/// let err = Scenario::from_toml("[nodes]\ncount = 2\nrate = 0.0\n[topology]\nkind = \"ring\"\n")
///     .unwrap_err();
/// assert_eq!(err.to_string(), "nodes.rate: 0 must be positive and finite (line 3)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
#[non_exhaustive]
pub struct ScenarioError {
    /// Dotted path of the field, e.g. `injections[1].time`.
    pub field: String,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl ScenarioError {
    /// An error about `field`, located by the byte range `span` of `source` if given.
    pub fn at(
        source: &str,
        field: impl Into<String>,
        span: Option<std::ops::Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            line: span.map(|s| line_of(source, s.start)),
            message: message.into(),
        }
    }

    /// Turns a TOML parse or deserialisation error into one naming its field.
    pub fn from_toml(source: &str, err: &toml::de::Error) -> Self {
        let message = err.message().trim().to_string();
        let Some(span) = err.span() else {
            return Self {
                field: "scenario".into(),
                line: None,
                message,
            };
        };
        let line = line_of(source, span.start);
        // A field missing from the document itself is reported at its very start (an empty
        // span at offset 0), which may be the header of the first table: it belongs to no
        // table.
        let whole_document = message.starts_with("missing field ")
            && span.start == 0
            && (span.end == 0 || span.end >= source.trim_end().len());
        let table = if whole_document {
            String::new()
        } else {
            enclosing_table(source, line)
        };
        let key = backticked_after(&message, "unknown field ")
            .or_else(|| backticked_after(&message, "missing field "))
            .or_else(|| key_on_line(source, line));
        let field = match (table.is_empty(), key) {
            (true, Some(k)) => k,
            (false, Some(k)) => format!("{table}.{k}"),
            (false, None) => table,
            (true, None) => "scenario".into(),
        };
        Self {
            field,
            line: Some(line),
            message,
        }
    }
}

/// 1-based line of byte `offset`.
fn line_of(source: &str, offset: usize) -> usize {
    let offset = offset.min(source.len());
    source.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The dotted name of the table that line `line` belongs to (`""` for the root), with an
/// index for arrays of tables: `injections[2]`.
fn enclosing_table(source: &str, line: usize) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let upto = line.min(lines.len());
    let Some(header_at) = (0..upto)
        .rev()
        .find(|&i| lines[i].trim_start().starts_with('['))
    else {
        return String::new();
    };
    let header = lines[header_at].trim();
    let header = header.split('#').next().unwrap_or("").trim();
    if let Some(name) = header.strip_prefix("[[").and_then(|h| h.strip_suffix("]]")) {
        let name = name.trim();
        let index = lines[..header_at]
            .iter()
            .filter(|l| {
                let l = l.trim();
                l.strip_prefix("[[")
                    .and_then(|h| h.split(']').next())
                    .is_some_and(|h| h.trim() == name)
            })
            .count();
        format!("{name}[{index}]")
    } else {
        header
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim()
            .to_string()
    }
}

/// The key assigned on line `line`, if the line is `key = value`.
fn key_on_line(source: &str, line: usize) -> Option<String> {
    let text = source.lines().nth(line.checked_sub(1)?)?.trim();
    if text.starts_with('[') {
        return None;
    }
    let (key, _) = text.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

/// The first `` `name` `` after `prefix` in `message`.
fn backticked_after(message: &str, prefix: &str) -> Option<String> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    let rest = rest.strip_prefix('`')?;
    Some(rest[..rest.find('`')?].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_arrays_of_tables_are_named() {
        let src = "a = 1\n[nodes]\ncount = 2\n[[injections]]\nnode = 0\n[[injections]]\nnode = 1\n";
        assert_eq!(enclosing_table(src, 1), "");
        assert_eq!(enclosing_table(src, 3), "nodes");
        assert_eq!(enclosing_table(src, 5), "injections[0]");
        assert_eq!(enclosing_table(src, 7), "injections[1]");
        assert_eq!(key_on_line(src, 7).as_deref(), Some("node"));
        assert_eq!(line_of(src, 0), 1);
        assert_eq!(line_of(src, 6), 2);
    }
}

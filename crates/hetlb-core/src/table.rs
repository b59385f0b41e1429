//! Presentation-neutral tables: what a report says, cell by cell, for any face to render.
//!
//! A library call returns typed results; the words and numbers a person reads beside them
//! (the paper's column next to ours, a ratio with its decimals, a verdict) are chosen once,
//! here, as [`Text`]: lines and [`Table`]s in order. The command line draws the tables with
//! borders, writes a [`Table`] as CSV, and a binding can print or convert the same cells, so
//! every face shows the same thing.
//!
//! ```
//! use hetlb_core::table::{Table, Text, fixed};
//! let mut t = Table::new(["n", "ours", "paper"]);
//! t.row([3.to_string(), fixed(1.23456, 3), "1.23".into()]);
//! let mut text = Text::new();
//! text.line("Table 1");
//! text.table(t);
//! assert_eq!(text.blocks().len(), 2);
//! ```

use serde::Serialize;

/// A table: a header row and rows of formatted cells (as many as the header, or fewer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Table {
    /// The header cells.
    pub headers: Vec<String>,
    /// The rows, each a list of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with `headers` and no rows.
    #[must_use]
    pub fn new<I, S>(headers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }
}

/// One block of a [`Text`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Block {
    /// A line of prose (it may hold line breaks; a face prints it as it is, then a line end).
    Line(String),
    /// A table.
    Table(Table),
}

/// What a report says to a person: lines and tables, in the order they are read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Text {
    blocks: Vec<Block>,
}

impl Text {
    /// An empty text.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a line.
    pub fn line(&mut self, line: impl Into<String>) {
        self.blocks.push(Block::Line(line.into()));
    }

    /// Appends a table.
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    /// Appends every block of `other`.
    pub fn extend(&mut self, other: Text) {
        self.blocks.extend(other.blocks);
    }

    /// The blocks, in order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }
}

/// `x` with `digits` decimals, nothing trimmed (columns of a table align).
///
/// ```
/// assert_eq!(hetlb_core::table::fixed(2.0, 3), "2.000");
/// ```
pub fn fixed(x: f64, digits: usize) -> String {
    format!("{x:.digits$}")
}

//! The one writer of the reports' Markdown tables: a table is its columns — each a heading
//! and how a row's cell is written — and its rows.

/// One column of a table: its heading, and its cell of a row (`R`).
pub struct Column<'a, R> {
    head: &'a str,
    cell: Box<dyn Fn(&R) -> String + 'a>,
}

impl<'a, R> Column<'a, R> {
    /// A column headed `head` whose cell of a row is `cell(row)`.
    pub fn new(head: &'a str, cell: impl Fn(&R) -> String + 'a) -> Column<'a, R> {
        Column {
            head,
            cell: Box::new(cell),
        }
    }
}

/// The table in Markdown: the headings, the separator, then a line per row; every line
/// ends with a newline.
pub fn table<R>(columns: &[Column<'_, R>], rows: impl IntoIterator<Item = R>) -> String {
    let mut s = line(columns.iter().map(|c| c.head.to_string()));
    s.push('|');
    for _ in columns {
        s.push_str("---|");
    }
    s.push('\n');
    for r in rows {
        s.push_str(&line(columns.iter().map(|c| (c.cell)(&r))));
    }
    s
}

/// `| a | b |` and a newline.
fn line(cells: impl Iterator<Item = String>) -> String {
    let mut s = String::from("|");
    for c in cells {
        s.push(' ');
        s.push_str(&c);
        s.push_str(" |");
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_separator_rows() {
        let cols = [
            Column::new("size", |r: &(u64, f64)| r.0.to_string()),
            Column::new("µs", |r: &(u64, f64)| format!("{:.1}", r.1)),
        ];
        assert_eq!(
            table(&cols, [(8, 1.5), (64, 2.0)]),
            "| size | µs |\n|---|---|\n| 8 | 1.5 |\n| 64 | 2.0 |\n"
        );
        assert_eq!(table(&cols, []), "| size | µs |\n|---|---|\n");
    }
}

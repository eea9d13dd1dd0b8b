//! Column alignment the way Go's `text/tabwriter` does it, which is what kubectl's `get` tables
//! and `describe` output go through.
//!
//! Text is split into lines and each line into cells at tabs; the text after a line's last tab is
//! not part of any column. A column is aligned over each run of consecutive lines that have a
//! tab-terminated cell in it, so a line without that cell starts a new block. One difference from
//! Go, on purpose: trailing spaces are trimmed from every line (tabwriter pads a cell even when
//! nothing follows it), so the output survives editors and golden files unchanged.

/// The tabwriter settings of one kubectl printer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Smallest width of a column, padding included.
    pub(crate) min_width: usize,
    /// Spaces added after the widest cell of a column.
    pub(crate) padding: usize,
}

/// kubectl `get` tables: `tabwriter.NewWriter(out, 6, 4, 3, ' ', …)`.
pub(crate) const TABLE: Layout = Layout {
    min_width: 6,
    padding: 3,
};
/// kubectl `describe`: `tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)`.
pub(crate) const DESCRIBE: Layout = Layout {
    min_width: 0,
    padding: 2,
};

/// Aligns tab-separated `text`; every output line ends with a newline.
pub(crate) fn align(text: &str, layout: Layout) -> String {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<Vec<&str>> = body
        .split('\n')
        .map(|line| line.split('\t').collect())
        .collect();
    let mut writer = Writer {
        lines: &lines,
        layout,
        widths: Vec::new(),
        out: String::new(),
    };
    writer.format(0, lines.len());
    writer.out
}

struct Writer<'a> {
    lines: &'a [Vec<&'a str>],
    layout: Layout,
    /// Widths of the columns to the left of the one being formatted.
    widths: Vec<usize>,
    out: String,
}

impl Writer<'_> {
    /// Go's `Writer.format`: finds the blocks of column `widths.len()` within `line0..line1`,
    /// sizes each, and recurses into the next column inside it.
    fn format(&mut self, mut line0: usize, line1: usize) {
        let column = self.widths.len();
        let mut this = line0;
        while this < line1 {
            if !self.has_cell(this, column) {
                this += 1;
                continue;
            }
            self.write_lines(line0, this);
            line0 = this;
            let mut width = self.layout.min_width;
            while this < line1 && self.has_cell(this, column) {
                let cell_width = self.lines[this][column].chars().count();
                width = width.max(cell_width + self.layout.padding);
                this += 1;
            }
            self.widths.push(width);
            self.format(line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(line0, line1);
    }

    /// Whether line `index` has a tab-terminated cell in `column`.
    fn has_cell(&self, index: usize, column: usize) -> bool {
        column + 1 < self.lines[index].len()
    }

    fn write_lines(&mut self, line0: usize, line1: usize) {
        for line in &self.lines[line0..line1] {
            let mut text = String::new();
            for (column, cell) in line.iter().enumerate() {
                text.push_str(cell);
                if let Some(width) = self.widths.get(column) {
                    let pad = width.saturating_sub(cell.chars().count());
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            self.out.push_str(text.trim_end_matches(' '));
            self.out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_each_block_of_consecutive_lines_separately() {
        let text =
            "Name:\tcrp-1\nAPI Version:\tv1\nSpec:\n  Type:\tPickAll\n  Revision Limit:\t10\n";
        assert_eq!(
            align(text, DESCRIBE),
            "Name:         crp-1\n\
             API Version:  v1\n\
             Spec:\n  \
               Type:            PickAll\n  \
               Revision Limit:  10\n"
        );
    }

    #[test]
    fn tables_pad_to_the_widest_cell_plus_three_and_at_least_six() {
        let text = "NAME\tGEN\tAGE\ncrp-long-name\t1\t5m\n";
        assert_eq!(
            align(text, TABLE),
            "NAME            GEN   AGE\ncrp-long-name   1     5m\n"
        );
    }

    #[test]
    fn empty_cells_are_padded_and_trailing_spaces_trimmed() {
        let text = "Namespace:\t\nLabels:\ta=b\n\tc=d\n";
        assert_eq!(
            align(text, DESCRIBE),
            "Namespace:\nLabels:     a=b\n            c=d\n"
        );
    }
}

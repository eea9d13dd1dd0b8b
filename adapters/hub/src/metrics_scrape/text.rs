//! Families rendered straight into the scrape's text rather than kept in the recorder: the
//! per-object series (a run, a placement, an approval) that must vanish once their object stops
//! qualifying — a recorder's series lives on — and the process's own, which are read from the
//! operating system at each scrape.

use std::fmt::Write;

/// One series: its labels in order and its value.
pub(super) type Sample = (Vec<(&'static str, String)>, f64);

/// A family of series of one name.
#[derive(Debug)]
pub(super) struct Family {
    /// The metric's name.
    pub(super) name: &'static str,
    /// Its `# HELP` text.
    pub(super) help: &'static str,
    /// Its `# TYPE`: `gauge` or `counter`.
    pub(super) kind: &'static str,
    /// Its series; a family without any renders its help and type only.
    pub(super) samples: Vec<Sample>,
}

impl Family {
    /// A gauge family with no series yet.
    pub(super) fn gauge(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            help,
            kind: "gauge",
            samples: Vec::new(),
        }
    }
}

/// Appends `families` to `out` in Prometheus text format.
pub(super) fn render(families: &[Family], out: &mut String) {
    for family in families {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind);
        for (labels, value) in &family.samples {
            out.push_str(family.name);
            if !labels.is_empty() {
                out.push('{');
                for (index, (key, label)) in labels.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{key}=\"{}\"", escape(label));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {value}");
        }
    }
}

/// A label value as the text format wants it: backslash, double quote and newline escaped
/// (object names cannot hold them, but reasons and messages come from members).
fn escape(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::{Family, render};

    #[test]
    fn a_family_renders_help_type_and_escaped_labels() {
        let mut family = Family::gauge("x_info", "An example");
        family.samples.push((
            vec![("a", "q\"b\\c\nd".to_owned()), ("b", "2".to_owned())],
            1.0,
        ));
        family.samples.push((Vec::new(), 0.5));
        let mut out = String::new();
        render(&[family], &mut out);
        assert_eq!(
            out,
            "# HELP x_info An example\n# TYPE x_info gauge\n\
             x_info{a=\"q\\\"b\\\\c\\nd\",b=\"2\"} 1\nx_info 0.5\n"
        );
    }
}

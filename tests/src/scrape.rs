//! One scrape of a served hub's `GET /metrics`, as the metrics tests read it.

use std::collections::BTreeMap;

use crate::support::{HarnessResult, HubProcess};

/// Series → value of one scrape (`name{labels}` as rendered).
pub type Scrape = BTreeMap<String, f64>;

/// Scrapes `hub` once.
///
/// # Errors
/// The hub not answering, or a line that is not a sample.
pub fn scrape(hub: &HubProcess) -> HarnessResult<Scrape> {
    let text = hub.get_text("/metrics")?;
    let mut series = Scrape::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (name, value) = line
            .rsplit_once(' ')
            .ok_or_else(|| format!("not a sample line: {line:?}"))?;
        let value: f64 = value.parse().map_err(|e| format!("{line:?}: {e}"))?;
        series.insert(name.to_owned(), value);
    }
    Ok(series)
}

/// The value of one series.
///
/// # Errors
/// The series missing from the scrape.
pub fn value(scrape: &Scrape, series: &str) -> HarnessResult<f64> {
    scrape
        .get(series)
        .copied()
        .ok_or_else(|| format!("no series {series} in {scrape:#?}"))
}

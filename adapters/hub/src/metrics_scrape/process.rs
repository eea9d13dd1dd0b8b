//! The process's own series, under the names Prometheus client libraries use, read from
//! `/proc/self` at each scrape (Linux; elsewhere, or when `/proc` cannot be read, they are left
//! out and the scrape goes on).

use super::text::{Family, Sample};

/// The four process families, or none when `/proc/self` cannot be read.
pub(super) fn families() -> Vec<Family> {
    match read() {
        Ok(process) => vec![
            one(
                "process_cpu_seconds_total",
                "User and system CPU time spent, seconds",
                "counter",
                process.cpu_seconds,
            ),
            one(
                "process_resident_memory_bytes",
                "Resident memory size, bytes",
                "gauge",
                process.resident_bytes,
            ),
            one(
                "process_open_fds",
                "Open file descriptors",
                "gauge",
                process.open_fds,
            ),
            one(
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch, seconds",
                "gauge",
                process.start_time_seconds,
            ),
        ],
        Err(error) => {
            tracing::debug!(%error, "cannot read /proc/self for /metrics");
            Vec::new()
        }
    }
}

fn one(name: &'static str, help: &'static str, kind: &'static str, value: f64) -> Family {
    let sample: Sample = (Vec::new(), value);
    Family {
        name,
        help,
        kind,
        samples: vec![sample],
    }
}

/// What `/proc` says of this process.
struct Process {
    cpu_seconds: f64,
    resident_bytes: f64,
    open_fds: f64,
    start_time_seconds: f64,
}

#[allow(clippy::cast_precision_loss)] // ticks, pages and descriptors stay far below 2^52
fn read() -> std::io::Result<Process> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let fields = stat_fields(&stat)?;
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let page = rustix::param::page_size() as f64;
    // Field numbers as in proc(5): utime 14, stime 15, starttime 22, rss 24 (pages).
    let cpu_ticks = field(&fields, 14)? + field(&fields, 15)?;
    let boot = boot_time()?;
    let open_fds = std::fs::read_dir("/proc/self/fd")?.count() as f64;
    Ok(Process {
        cpu_seconds: cpu_ticks / ticks,
        resident_bytes: field(&fields, 24)? * page,
        // The descriptor `read_dir` holds open while it lists is one of them.
        open_fds: (open_fds - 1.0).max(0.0),
        start_time_seconds: boot + field(&fields, 22)? / ticks,
    })
}

/// The fields of `/proc/self/stat` after the command name, which is in parentheses and may
/// hold spaces and parentheses itself: the first is field 3 (the state).
fn stat_fields(stat: &str) -> std::io::Result<Vec<&str>> {
    let (_, after) = stat
        .rsplit_once(')')
        .ok_or_else(|| invalid("no command name in /proc/self/stat"))?;
    Ok(after.split_whitespace().collect())
}

/// Field `number` (counted from 1, as in proc(5)) of `/proc/self/stat`, of the fields after
/// the command name.
fn field(fields: &[&str], number: usize) -> std::io::Result<f64> {
    number
        .checked_sub(3)
        .and_then(|index| fields.get(index))
        .and_then(|text| text.parse::<f64>().ok())
        .ok_or_else(|| invalid("a field of /proc/self/stat is missing"))
}

/// When the system booted, in seconds since the Unix epoch (`btime` of `/proc/stat`).
fn boot_time() -> std::io::Result<f64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|seconds| seconds.trim().parse::<f64>().ok())
        .ok_or_else(|| invalid("no btime in /proc/stat"))
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_after_a_command_name_with_spaces_and_parentheses() -> std::io::Result<()> {
        let stat = "42 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 11 12";
        let fields = super::stat_fields(stat)?;
        assert_eq!(fields.first(), Some(&"S"));
        assert_eq!(super::field(&fields, 14)?, 11.0);
        assert!(super::field(&fields, 30).is_err());
        Ok(())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reads_as_started_and_running() -> std::io::Result<()> {
        let process = super::read()?;
        assert!(process.resident_bytes > 0.0);
        assert!(process.open_fds >= 3.0, "stdin, stdout, stderr");
        assert!(process.start_time_seconds > 1.0e9);
        assert!(process.cpu_seconds >= 0.0);
        Ok(())
    }
}

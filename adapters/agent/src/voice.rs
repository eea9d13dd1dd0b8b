//! Where an agent's output lines go, apart from the agent's loop so the appliers and the
//! reconciler that print can name it without importing the loop.

/// Where an agent's output lines go: standard output for `flotilla agent`, nowhere for the
/// agents a scenario runs inside its own process (whose output is the scenario's result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Voice {
    /// Printed, one line each.
    #[default]
    Stdout,
    /// Not printed.
    Silent,
}

impl Voice {
    /// Prints one output line, unless silent.
    pub fn say(self, line: std::fmt::Arguments<'_>) {
        if self == Voice::Stdout {
            println!("{line}");
        }
    }
}

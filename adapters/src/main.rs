//! The `flotilla` binary.

fn main() -> std::process::ExitCode {
    flotilla_adapters::entry::main()
}

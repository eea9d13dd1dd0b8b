//! The `flotilla` command built inside the test package, so end-to-end tests can start it by
//! path (`CARGO_BIN_EXE_flotilla-e2e`): the same entry point as the shipped binary.

fn main() -> std::process::ExitCode {
    flotilla_cli::entry::main()
}

//! flotilla-tests: integration tests live in tests/tests.

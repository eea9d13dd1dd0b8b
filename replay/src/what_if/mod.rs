//! what-if (in progress)

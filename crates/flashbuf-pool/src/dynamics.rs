//! dynamics

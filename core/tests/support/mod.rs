//! Shared test support: the loopback mock model.
#![allow(dead_code)]

pub mod mock;

//! The launcher's library: the emulated hypercube interconnect ([`cubenet`]) that both
//! `hcrun --link-rate` and the `cubenet` command build.

pub mod cubenet;

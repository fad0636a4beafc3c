//! The basic communication operations of Grama et al., chapter 4 (work in progress).

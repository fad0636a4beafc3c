//! The Moler–Scott iPSC communication utilities (work in progress).

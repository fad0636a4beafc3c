//! A process joins one job: a second `init` is its own error, not a misleading one about
//! the launcher's environment (which the first call consumed).

#[test]
fn init_twice_is_already_initialized() {
    let node = hypercube::init().expect("a job of one node");
    assert_eq!(node.numnodes(), 1);
    let e = hypercube::init().expect_err("a second init must fail");
    assert!(matches!(e, hypercube::Error::AlreadyInitialized), "{e:?}");
    assert!(e.to_string().contains("called twice"), "{e}");
    node.finalize().expect("finalize");
}

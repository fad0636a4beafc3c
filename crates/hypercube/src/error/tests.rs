//! The error messages, checked word by word where users read them.

use super::*;

fn all_reactions() -> Vec<Error> {
    vec![
        Error::PeerGone {
            peer: 6,
            detail: "the connection closed without a goodbye".into(),
        },
        Error::PeerGone {
            peer: crate::HOST,
            detail: "reading the link failed: reset".into(),
        },
        Error::Shutdown("rank 6 failed (killed by signal 9)".into()),
    ]
}

#[test]
fn reactions_are_recognised_in_display_and_debug_form() {
    for e in all_reactions() {
        assert!(e.is_reaction(), "{e:?}");
        for text in [
            format!("Error: {e}"),
            format!("called `unwrap()` on `Err`: {e:?}"),
        ] {
            assert!(Error::is_reaction_text(&text), "{text}");
            assert!(!Error::is_peer_finished_text(&text), "{text}");
        }
    }
    assert!(Error::is_reaction_text(
        "node 3: the job is shutting down: rank 6 failed"
    ));
}

#[test]
fn peer_finished_is_recognised_and_is_not_a_reaction() {
    let e = Error::PeerFinished {
        peer: 1,
        what: "a message of type 1".into(),
    };
    assert!(!e.is_reaction());
    for text in [e.to_string(), format!("{e:?}")] {
        assert!(Error::is_peer_finished_text(&text), "{text}");
        assert!(!Error::is_reaction_text(&text), "{text}");
    }
}

/// A dead link is the fault hcrun must name, not a reaction to one, also once it has
/// been handed to every waiter.
#[test]
fn a_dead_link_names_both_nodes_and_the_dimension_and_is_no_reaction() {
    let e = Error::LinkDead {
        node: 7,
        peer: 5,
        dim: Some(1),
        detail: "nothing acknowledged for 3.0 s".into(),
    };
    let copy = e.duplicate();
    for text in [e.to_string(), copy.to_string(), format!("{copy:?}")] {
        assert!(!Error::is_reaction_text(&text), "{text}");
    }
    assert!(!copy.is_reaction());
    assert!(
        copy.to_string()
            .starts_with("link dim 1 between node 5 and node 7 is dead: nothing"),
        "{copy}"
    );
    let host = Error::LinkDead {
        node: 0,
        peer: crate::HOST,
        dim: None,
        detail: String::new(),
    };
    assert!(host.to_string().contains("between node 0 and the host"));
    assert!(!Error::is_cut_off_text(&copy.to_string()));
    let cut = format!("node 5{CUT_OFF_PHRASE}0, 2 are silent too)");
    assert!(Error::is_cut_off_text(&format!("Error: {cut}")), "{cut}");
}

#[test]
fn counts_of_one_are_singular() {
    let texts = [
        Error::Truncated {
            needed: 1,
            capacity: 0,
            source_node: 2,
            msg_type: 3,
        }
        .to_string(),
        Error::GopLongMessage {
            from: 1,
            expected: 1,
            received: 2,
        }
        .to_string(),
        Error::GopShortMessage {
            from: 1,
            expected: 2,
            received: 1,
        }
        .to_string(),
        Error::LrecvwTruncated {
            needed: 1,
            capacity: 0,
            source_node: 2,
            msg_type: 3,
        }
        .to_string(),
    ];
    for t in &texts {
        for bad in ["1 bytes", "1 elements", "first 1 were"] {
            assert!(!t.contains(bad), "{t}");
        }
    }
    assert!(texts[0].contains("is 1 byte but"), "{}", texts[0]);
    assert!(
        texts[2].contains("contributed 1 element but"),
        "{}",
        texts[2]
    );
    let many = Error::Truncated {
        needed: 2,
        capacity: 1,
        source_node: 2,
        msg_type: 3,
    }
    .to_string();
    assert!(many.contains("is 2 bytes but"), "{many}");
}

#[test]
fn own_errors_are_not_reactions() {
    let own = [
        Error::InvalidType {
            msg_type: 1 << 31,
            max: (1 << 31) - 1,
        },
        Error::Config("HYPERCUBE_SPIN_US=\"x\" is malformed".into()),
        Error::Protocol {
            peer: 2,
            detail: "bad magic".into(),
        },
    ];
    for e in own {
        assert!(!e.is_reaction());
        assert!(!Error::is_reaction_text(&e.to_string()), "{e}");
        assert!(!Error::is_reaction_text(&format!("{e:?}")), "{e:?}");
    }
    // A user's own words that happen to mention a peer node.
    assert!(!Error::is_reaction_text("peer node is gone, says the user"));
    assert!(!Error::is_reaction_text("rank 1 gives up on purpose"));
}

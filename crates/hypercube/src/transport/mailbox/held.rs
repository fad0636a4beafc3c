//! Messages a receiver set aside after taking them ([`Held`]).

use crate::base::message::{Message, Select};

/// Messages a receiver took off the queue and then set aside, for a later receive that
/// looks here first (`Node::take_held`) and matches them: it gets them before anything
/// still queued. A message is held, for instance, when it turned out not to fit the
/// caller's buffer (the header of a long message, `ipsc::long`). The one held last is
/// matched first.
#[derive(Debug, Default)]
pub(crate) struct Held(Vec<Message>);

impl Held {
    /// Set `m` aside, ahead of the messages held before it.
    pub(crate) fn hold(&mut self, m: Message) {
        self.0.insert(0, m);
    }

    /// Take the first held message that `sel` matches.
    pub(crate) fn take(&mut self, sel: &Select) -> Option<Message> {
        let i = self.0.iter().position(|m| sel.matches(m.source, m.tag))?;
        Some(self.0.remove(i))
    }
}

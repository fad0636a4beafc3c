//! The ranks' output: every line a rank writes to stdout or stderr is copied to hcrun's,
//! whole (one lock for all ranks, so lines never interleave), prefixed with the rank if
//! asked; a rank's stderr is also read for its last error line (for the verdict).

use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::verdict::ErrorTail;

/// Where a rank's stderr goes besides hcrun's stderr: its last error line is kept (for the
/// verdict), and the end of the stream is signalled (so its exit is judged with all it said).
pub struct StderrWatch {
    /// The rank's last error line, as far as it has been read.
    pub tail: Arc<Mutex<ErrorTail>>,
    /// Fired when the stream ends.
    pub done: tokio::sync::oneshot::Sender<()>,
}

/// Which of hcrun's streams a rank's stream is copied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// hcrun's stdout (flushed after every line).
    Stdout,
    /// hcrun's stderr.
    Stderr,
}

/// Copy a rank's output to ours, line by line, prefixed with its rank (`label`) if
/// `prefix`; `lock` is shared by all ranks' copies.
pub async fn forward<R: tokio::io::AsyncRead + Unpin>(
    label: String,
    prefix: bool,
    stream: R,
    to: To,
    lock: Arc<Mutex<()>>,
    watch: Option<StderrWatch>,
) {
    let mut r = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(w) = &watch {
            let text = String::from_utf8_lossy(&line);
            w.tail
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .feed(text.trim_end_matches(['\n', '\r']));
        }
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        let _g = lock.lock().unwrap_or_else(|p| p.into_inner());
        let tag = prefix.then_some(label.as_str());
        let res = match to {
            To::Stderr => put(&mut std::io::stderr().lock(), tag, &line),
            To::Stdout => {
                let mut o = std::io::stdout().lock();
                put(&mut o, tag, &line).and_then(|_| o.flush())
            }
        };
        if res.is_err() {
            break;
        }
    }
    if let Some(w) = watch {
        let _ = w.done.send(());
    }
}

/// Write one line, after `[label] ` if there is a label.
fn put(w: &mut impl Write, label: Option<&str>, line: &[u8]) -> std::io::Result<()> {
    if let Some(l) = label {
        write!(w, "[{l}] ")?;
    }
    w.write_all(line)
}

//! Node program: prints its pid, then rank `R` (argument 1) fails in the way argument 2
//! says (exit, panic, abort) — or, with `hang`, computes (sleeps) for up to two minutes,
//! never waiting for a message, so that a test can kill it — while every other rank
//! blocks in a receive that never comes.
//!
//! With `HC_TEST_PID_DIR` set, every process first creates an empty file named by its pid
//! in that directory (before it joins the job), so a test can find every rank that ever
//! started.

use anyhow::{Context, Result};
use hypercube::TypeSel;

fn main() -> Result<()> {
    if let Some(dir) = std::env::var_os("HC_TEST_PID_DIR") {
        let path = std::path::Path::new(&dir).join(std::process::id().to_string());
        std::fs::write(&path, b"").with_context(|| format!("writing {}", path.display()))?;
    }
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let bad: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let how = args.next().unwrap_or_else(|| "exit".into());
    println!("PID {}", std::process::id());
    if node.mynode() == bad {
        if how == "hang" {
            std::thread::sleep(std::time::Duration::from_secs(120));
            std::process::exit(3);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        match how.as_str() {
            "panic" => panic!("rank {bad} panics on purpose"),
            "abort" => std::process::abort(),
            _ => std::process::exit(3),
        }
    }
    node.recv(TypeSel::Is(1))?;
    Ok(())
}

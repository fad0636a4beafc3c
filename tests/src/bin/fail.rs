//! Node program: prints its pid, then rank `R` (argument 1) fails in the way argument 2
//! says (exit, panic, abort) while every other rank blocks in a receive that never comes.

use anyhow::Result;
use hypercube::TypeSel;

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let bad: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let how = args.next().unwrap_or_else(|| "exit".into());
    println!("PID {}", std::process::id());
    if node.mynode() == bad {
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

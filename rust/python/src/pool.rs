//! Worker threads kept for batch scoring, parked between batches.
//!
//! Starting threads for every batch costs more than their start-up: each new thread begins with
//! an empty allocator heap and touches fresh pages for every stream it builds, and on two cores
//! that showed as a 2-thread batch running well under twice one thread. The threads here block
//! in `recv` when idle (no spinning, so an idle pool takes no CPU from the calling thread), and
//! each job owns what it reads, so no borrow has to outlive a call.
//!
//! Jobs are handed out under the GIL, so no thread can hold the pool's lock across a `fork`; a
//! forked child (whose pool threads do not exist) sees another process id and starts its own.

use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;
use std::thread;

pub(crate) type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    pid: u32,
    workers: Vec<Sender<Job>>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn spawn_worker() -> Option<Sender<Job>> {
    let (send, jobs) = mpsc::channel::<Job>();
    thread::Builder::new()
        .name("toolwire-batch".into())
        .spawn(move || {
            for job in jobs {
                job();
            }
        })
        .ok()?;
    Some(send)
}

/// Hands `job` to pool thread `worker` (the pool grows to the threads asked for); a job no
/// thread could be started for comes back.
pub(crate) fn submit(worker: usize, job: Job) -> Result<(), Job> {
    let mut guard = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pid = std::process::id();
    let pool = match &mut *guard {
        Some(pool) if pool.pid == pid => pool,
        stale => stale.insert(Pool {
            pid,
            workers: Vec::new(),
        }),
    };
    while pool.workers.len() <= worker {
        match spawn_worker() {
            Some(sender) => pool.workers.push(sender),
            None => return Err(job),
        }
    }
    let Err(mpsc::SendError(job)) = pool.workers[worker].send(job) else {
        return Ok(());
    };
    // That thread has gone: start another in its place.
    match spawn_worker() {
        Some(sender) => {
            pool.workers[worker] = sender;
            pool.workers[worker]
                .send(job)
                .map_err(|mpsc::SendError(job)| job)
        }
        None => Err(job),
    }
}

#![allow(clippy::unwrap_used)]
//! ICL under concurrent callers: writer threads (each with its own pages, whole and
//! partial writes as dirty ranges, in single writes and batches), reader threads and a
//! syncing thread, over a small WOB and log space so that flushes and merges interleave
//! with reads. Every read must succeed with a page that passes its check and is a version
//! its writer wrote; at the end every page reads exactly its last version, before and
//! after a reopen.

mod icl_support;

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::icl::IclStore;
use flashbuf_store::{PageStore, PageWrite, ReadOutcome};
use icl_support::{config, Model};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

const WRITERS: u64 = 3;
const PAGES_PER_WRITER: u64 = 16;

#[test]
fn concurrent_writers_readers_and_syncs_see_whole_versions() {
    let cfg = config(4096, 2, 8, 2);
    let store = IclStore::create(MemDevice::new(0), cfg).unwrap();
    // Every version written, per page (readers check against it).
    let written: Mutex<HashMap<PageId, Vec<Vec<u8>>>> = Mutex::new(HashMap::new());
    // Pages whose first write has returned.
    let completed: Mutex<HashMap<PageId, bool>> = Mutex::new(HashMap::new());
    let done = AtomicBool::new(false);
    let models: Vec<Model> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2u64)
            .map(|r| {
                let (store, written, done, completed) = (&store, &written, &done, &completed);
                s.spawn(move || {
                    let mut rng = SplitMix64::new(100 + r);
                    let mut buf = vec![0u8; 4096];
                    let mut n = 0u64;
                    while !done.load(Ordering::Relaxed) || n < 200 {
                        let pid = PageId(rng.below(WRITERS * PAGES_PER_WRITER));
                        let before = completed.lock().unwrap().contains_key(&pid);
                        match store.read_page(pid, &mut buf).unwrap() {
                            ReadOutcome::Unwritten => assert!(!before, "{pid} lost"),
                            ReadOutcome::Found => {
                                page::check(&buf, pid).unwrap();
                                let w = written.lock().unwrap();
                                assert!(w[&pid].contains(&buf), "{pid}: a version never written");
                            }
                        }
                        n += 1;
                    }
                })
            })
            .collect();
        let syncer = {
            let (store, done) = (&store, &done);
            s.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    store.sync().unwrap();
                    std::thread::yield_now();
                }
            })
        };
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let (store, written, completed) = (&store, &written, &completed);
                s.spawn(move || {
                    let mut m = Model::new(4096);
                    let mut rng = SplitMix64::new(t);
                    for i in 0..600u64 {
                        let batch = rng.below(5) == 0;
                        let n = if batch { 3 } else { 1 };
                        let mut pages = Vec::new();
                        for k in 0..n {
                            let pid = PageId(
                                t * PAGES_PER_WRITER
                                    + (rng.below(PAGES_PER_WRITER) + k) % PAGES_PER_WRITER,
                            );
                            if pages.iter().any(|(p, _)| *p == pid) {
                                continue;
                            }
                            let w = if !m.pages.contains_key(&pid) || rng.below(8) == 0 {
                                m.whole(pid, i)
                            } else {
                                let e = [(rng.below(4000) as usize, 1 + rng.below(120) as usize)];
                                m.edit(pid, &e, i)
                            };
                            pages.push((pid, w));
                        }
                        {
                            let mut w = written.lock().unwrap();
                            for (pid, (p, _)) in &pages {
                                w.entry(*pid).or_default().push(p.clone());
                            }
                        }
                        let batch: Vec<PageWrite<'_>> = pages
                            .iter()
                            .map(|(pid, (p, d))| PageWrite {
                                pid: *pid,
                                page: p,
                                dirty: *d,
                            })
                            .collect();
                        store.write_pages(&batch).unwrap();
                        let mut c = completed.lock().unwrap();
                        for (pid, _) in &pages {
                            c.insert(*pid, true);
                        }
                    }
                    m
                })
            })
            .collect();
        let models = writers.into_iter().map(|h| h.join().unwrap()).collect();
        done.store(true, Ordering::Relaxed);
        syncer.join().unwrap();
        for r in readers {
            r.join().unwrap();
        }
        models
    });
    store.check_invariants().unwrap();
    let s = store.icl_stats();
    assert!(
        s.log_writes > 0 && s.merges_bulk > 0 && s.copy_forwards > 0,
        "{s:?}"
    );
    for m in &models {
        m.verify(&store, &[]);
    }
    store.sync().unwrap();
    let store = IclStore::open(store.into_device(), cfg).unwrap();
    for m in &models {
        m.verify(&store, &[]);
    }
}

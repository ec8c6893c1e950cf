//! FD-Buffer's invariant checks ([`Policy::check_invariants`]).

use super::{FdBuffer, FrameState, PoolOrder, ABSENT, CLEAN, DIRTY, FREE};
#[cfg(doc)]
use crate::policy::Policy;
use flashbuf_core::FrameId;

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// [`Policy::check_invariants`]: pools, tags, orderings, `M_c`, the estimators
    /// and the clusters agree.
    pub(super) fn check_all(&self) -> Result<(), String> {
        self.clean.check()?;
        self.dirty.check()?;
        if !self.ordered_dirty && !self.dirty.is_empty() {
            return Err("the dirty pool's ordering is not kept but holds frames".into());
        }
        let mut n = [0usize; 3];
        for (i, &FrameState { tag: t, dirty, .. }) in self.fr.iter().enumerate() {
            if t > DIRTY {
                return Err(format!("frame {i}: bad tag {t}"));
            }
            n[t as usize] += 1;
            if t == CLEAN && dirty {
                return Err(format!("frame {i}: dirty page in the clean pool"));
            }
            if t == FREE && dirty {
                return Err(format!("frame {i}: free but dirty"));
            }
            let clustered = self
                .clusters
                .as_ref()
                .map(|c| c.contains(FrameId(i as u32)));
            if clustered.is_some_and(|c| c != (t == DIRTY)) {
                return Err(format!("frame {i}: cluster membership disagrees with pool"));
            }
        }
        if n[CLEAN as usize] != self.clean.len() || n[DIRTY as usize] != self.d_len {
            return Err(format!(
                "tags say {} clean / {} dirty, pools hold {} / {}",
                n[1],
                n[2],
                self.clean.len(),
                self.d_len
            ));
        }
        for f in self.clean.members_victim_first() {
            if self.fr[f.index()].tag != CLEAN {
                return Err(format!(
                    "{f} in the clean ordering but tagged {}",
                    self.fr[f.index()].tag
                ));
            }
        }
        if self.ordered_dirty && self.dirty.len() != self.d_len {
            return Err(format!(
                "dirty ordering holds {}, the pool {}",
                self.dirty.len(),
                self.d_len
            ));
        }
        for f in self.dirty.members_victim_first() {
            if self.fr[f.index()].tag != DIRTY {
                return Err(format!(
                    "{f} in the dirty ordering but tagged {}",
                    self.fr[f.index()].tag
                ));
            }
        }
        if self.m >= 2 && !(1..self.m).contains(&self.m_c) {
            return Err(format!("M_c = {} outside 1..{}", self.m_c, self.m));
        }
        let page_of =
            |f: FrameId| (self.fr[f.index()].tag != FREE).then(|| self.fr[f.index()].page);
        let fr = &self.fr;
        let held = |f: FrameId| {
            (fr[f.index()].tag != FREE).then(|| (fr[f.index()].page, fr[f.index()].slots))
        };
        match &self.stream {
            None => self.est.check_in(&held)?,
            Some(s) if s.underruns > 0 => {
                return Err(format!(
                    "{} windows closed before the detached estimator's counters arrived",
                    s.underruns
                ))
            }
            Some(_) => {}
        }
        let free_with_slots = fr.iter().position(|s| s.tag == FREE && s.slots != ABSENT);
        if let Some(f) = free_with_slots {
            return Err(format!("free frame {f} holds Two-Stack slots"));
        }
        if let Some(s) = &self.shadow {
            s.check_resident(&page_of)?;
        }
        if let Some(c) = &self.clusters {
            c.check(&|f| self.fr[f.index()].tag == DIRTY)?;
        }
        Ok(())
    }
}

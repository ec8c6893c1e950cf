//! The clusters' invariant checks.

use super::{Clusters, Live, NIL};
use flashbuf_core::FrameId;

impl Clusters {
    /// Checks cluster lists, counts and dividends; `members` is the dirty pool.
    pub fn check(&self, in_dirty_pool: &dyn Fn(FrameId) -> bool) -> Result<(), String> {
        let mut total = 0usize;
        for (pos, l) in self.active.iter().enumerate() {
            let s = l.slot;
            let c = &self.slots[s as usize];
            if c.active_pos as usize != pos
                || self.map.get(c.no) != Some(s)
                || l.slot != s
                || (l.n, l.div, l.timestamp) != (c.n, Live::of(s, c).div, c.timestamp)
            {
                return Err(format!("cluster {} badly registered", c.no));
            }
            let (mut n, mut ipd, mut last, mut cur) = (0u32, 0u64, NIL, c.first);
            while cur != NIL {
                if self.slot_of[cur as usize] != s
                    || self.page[cur as usize] / self.cluster_pages != c.no
                {
                    return Err(format!("frame {cur} misfiled in cluster {}", c.no));
                }
                if !in_dirty_pool(FrameId(cur)) {
                    return Err(format!("frame {cur} clustered but not in the dirty pool"));
                }
                if last != NIL {
                    ipd += self.page[last as usize].abs_diff(self.page[cur as usize]);
                }
                n += 1;
                last = cur;
                cur = self.next[cur as usize];
            }
            if n != c.n
                || ipd != c.ipd
                || last != c.last
                || n == 0
                || c.timestamp >= self.globaltime
            {
                return Err(format!(
                    "cluster {}: n {n}/{}, ipd {ipd}/{}",
                    c.no, c.n, c.ipd
                ));
            }
            total += n as usize;
        }
        let clustered = self.slot_of.iter().filter(|&&s| s != NIL).count();
        if clustered != total || self.map.len() != self.active.len() {
            return Err(format!("{clustered} frames clustered, {total} linked"));
        }
        Ok(())
    }
}

//! Where the workspace's repository keeps its files, and the paths of its index
//! (index-format(5)): what git tracks, which is never counted as ignored.

use std::fs;
use std::path::{Path, PathBuf};

/// Where the workspace's repository keeps its files: `.git`, or the directory a `.git` file
/// names (`gitdir: …`), and the common directory a linked worktree shares (`commondir`).
pub(super) struct GitDirs {
    /// The index's directory.
    pub(super) git: PathBuf,
    /// The configuration's and `info/exclude`'s.
    pub(super) common: PathBuf,
    /// 20 (SHA-1) or 32 (SHA-256, `extensions.objectFormat`).
    pub(super) hash_len: usize,
}

impl GitDirs {
    pub(super) fn of(root: &Path) -> Option<GitDirs> {
        let dot_git = root.join(".git");
        let meta = fs::metadata(&dot_git).ok()?;
        let git = if meta.is_dir() {
            dot_git
        } else {
            let text = fs::read_to_string(&dot_git).ok()?;
            root.join(text.strip_prefix("gitdir:")?.trim())
        };
        let common = fs::read_to_string(git.join("commondir"))
            .ok()
            .map_or_else(|| git.clone(), |c| git.join(c.trim()));
        Some(GitDirs {
            git,
            common,
            hash_len: 20,
        })
    }
}

/// The paths of git's index (index-format(5), versions 2 to 4, with a split index's shared
/// part), sorted; empty where it cannot be read, as in a repository without commits.
pub(super) fn read_index(repo: &GitDirs) -> Vec<Vec<u8>> {
    let Ok(data) = fs::read(repo.git.join("index")) else {
        return Vec::new();
    };
    let (mut paths, shared) = parse_index(&data, repo.hash_len).unwrap_or_default();
    if let Some(hash) = shared {
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        if let Ok(data) = fs::read(repo.git.join(format!("sharedindex.{hex}"))) {
            // Entries the split part deletes stay listed: a path counted as tracked is
            // recorded for undo, the safe side.
            paths.extend(parse_index(&data, repo.hash_len).unwrap_or_default().0);
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// An index's paths, and the hash naming its shared index.
type IndexPaths = (Vec<Vec<u8>>, Option<Vec<u8>>);

/// An index's entry paths, and the shared index a split index names (its `link` extension).
fn parse_index(data: &[u8], hash_len: usize) -> Option<IndexPaths> {
    let be32 = |at: usize| -> Option<u32> {
        data.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if data.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    let count = be32(8)? as usize;
    let mut paths = Vec::with_capacity(count.min(1 << 20));
    let mut pos = 12;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = pos;
        let flags_at = start + 40 + hash_len;
        let flags = u16::from_be_bytes([*data.get(flags_at)?, *data.get(flags_at + 1)?]);
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version >= 4 {
            // The name is the previous one less `strip` bytes, then the bytes to the NUL.
            let mut strip: usize = 0;
            let mut at = name_at;
            loop {
                let c = *data.get(at)?;
                at += 1;
                strip = (strip << 7) | usize::from(c & 0x7f);
                if c & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let end = at + data.get(at..)?.iter().position(|b| *b == 0)?;
            let mut name = prev.get(..prev.len().checked_sub(strip)?)?.to_vec();
            name.extend_from_slice(&data[at..end]);
            pos = end + 1;
            name
        } else {
            let end = name_at + data.get(name_at..)?.iter().position(|b| *b == 0)?;
            // Padded with 1 to 8 NULs to a multiple of 8 bytes.
            pos = start + ((end - start + 8) & !7);
            data[name_at..end].to_vec()
        };
        prev.clone_from(&name);
        paths.push(name);
    }
    // Extensions follow, up to the closing checksum.
    let mut shared = None;
    while pos + 8 + hash_len <= data.len() {
        let size = be32(pos + 4)? as usize;
        if &data[pos..pos + 4] == b"link" {
            shared = data.get(pos + 8..pos + 8 + hash_len).map(<[u8]>::to_vec);
        }
        pos += 8 + size;
    }
    Some((paths, shared))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_4_index_s_prefix_compressed_paths_are_read() {
        // Two entries with no extended flags, SHA-1: "ab/c" then "ab/d" (strip 1, then "d").
        let mut data = b"DIRC".to_vec();
        data.extend(4u32.to_be_bytes());
        data.extend(2u32.to_be_bytes());
        for (strip, suffix) in [(0u8, &b"ab/c"[..]), (1, b"d")] {
            data.extend([0u8; 40 + 20]);
            data.extend(4u16.to_be_bytes());
            data.push(strip);
            data.extend(suffix);
            data.push(0);
        }
        data.extend([0u8; 20]);
        let (paths, shared) = parse_index(&data, 20).expect("index");
        assert_eq!(paths, [b"ab/c".to_vec(), b"ab/d".to_vec()]);
        assert!(shared.is_none());
    }
}

//! The rows of a NumPy array as the byte records the balancer moves (`hetlb_peer::Records`):
//! each row with an 8-byte id, and its load when the rows are weighted, appended.

use super::packed::id_of;
use numpy::ndarray::ArrayView2;

/// Rows packed as records: `count` records of `size` bytes, each a row of `width` bytes, its
/// id and (when `weighted`) its load.
pub struct RowRecords {
    /// The records, back to back.
    pub buffer: Vec<u8>,
    /// Bytes of a row.
    pub width: usize,
    /// Bytes of a record.
    pub size: usize,
    /// Whether each record carries a load.
    pub weighted: bool,
}

impl RowRecords {
    /// Packs `rows` of `rank` with their `loads` (one per row, or `None`: one unit each).
    pub fn pack(rows: ArrayView2<'_, u8>, loads: Option<&[u64]>, rank: usize) -> Self {
        let (n, width) = rows.dim();
        let weighted = loads.is_some();
        let size = width + if weighted { 16 } else { 8 };
        let mut buffer: Vec<u8> = vec![0; n * size];
        let append = |i: usize, record: &mut [u8]| {
            record[width..width + 8].copy_from_slice(&id_of(rank, i).to_ne_bytes());
            if let Some(l) = loads {
                record[width + 8..].copy_from_slice(&l[i].to_ne_bytes());
            }
        };
        let records = buffer.chunks_exact_mut(size).enumerate();
        match rows.as_slice() {
            // The usual case (the caller passes a C-contiguous array): one slice per row.
            Some(all) if width > 0 => {
                for ((i, record), row) in records.zip(all.chunks_exact(width)) {
                    record[..width].copy_from_slice(row);
                    append(i, record);
                }
            }
            _ => {
                for ((i, record), row) in records.zip(rows.outer_iter()) {
                    for (b, x) in record[..width].iter_mut().zip(row.iter()) {
                        *b = *x;
                    }
                    append(i, record);
                }
            }
        }
        Self {
            buffer,
            width,
            size,
            weighted,
        }
    }

    /// The load of a record (its bytes after the row and the id; 0 when it has none).
    pub fn load_of(width: usize) -> impl Fn(&[u8]) -> u64 {
        move |r: &[u8]| {
            r.get(width + 8..width + 16)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map_or(0, u64::from_ne_bytes)
        }
    }

    /// The rows of the records held, back to back, and their count.
    pub fn unpack(&self) -> (Vec<u8>, usize) {
        let held = self.buffer.len() / self.size;
        let mut flat = vec![0u8; held * self.width];
        if self.width > 0 {
            for (row, record) in flat
                .chunks_exact_mut(self.width)
                .zip(self.buffer.chunks_exact(self.size))
            {
                row.copy_from_slice(&record[..self.width]);
            }
        }
        (flat, held)
    }
}

//! The rows of a NumPy array as the byte records the balancer moves (`hetlb_peer::Records`):
//! each row with an 8-byte id, and its load when the rows are weighted, appended.

use super::packed::id_of;
use numpy::ndarray::ArrayView2;

/// Why rows cannot be packed.
#[derive(Debug)]
pub enum PackError {
    /// `n` rows of `width` bytes, with their ids, are more bytes than an array can hold.
    Overflow {
        /// Rows.
        n: usize,
        /// Bytes of a row.
        width: usize,
    },
    /// The records' `bytes` could not be allocated.
    NoMemory {
        /// Bytes asked for.
        bytes: usize,
    },
}

impl std::fmt::Display for PackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackError::Overflow { n, width } => write!(
                f,
                "arr: {n} rows of {width} bytes are more than an array can hold"
            ),
            PackError::NoMemory { bytes } => {
                write!(f, "arr: {bytes} bytes of records cannot be allocated")
            }
        }
    }
}

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
    /// Where each record carries its coordinates: byte offset and count.
    pub positions: Option<(usize, usize)>,
}

impl RowRecords {
    /// Packs `rows` of `rank` with their `loads` (one per row, or `None`: one unit each) and
    /// their `coords` (one row of 1 to 3 coordinates per row, or `None`).
    ///
    /// # Errors
    /// [`PackError::Overflow`] when the records' bytes overflow (an array whose shape claims
    /// more than memory holds, as a broadcast view can), [`PackError::NoMemory`] when they
    /// cannot be allocated: checked before anything is allocated.
    pub fn pack(
        rows: ArrayView2<'_, u8>,
        loads: Option<&[u64]>,
        coords: Option<ArrayView2<'_, f64>>,
        rank: usize,
    ) -> Result<Self, PackError> {
        let (n, width) = rows.dim();
        let weighted = loads.is_some();
        let at = width
            .checked_add(if weighted { 16 } else { 8 })
            .ok_or(PackError::Overflow { n, width })?;
        let dim = coords.as_ref().map_or(0, |c| c.ncols());
        let size = at
            .checked_add(8 * dim)
            .ok_or(PackError::Overflow { n, width })?;
        let bytes = n
            .checked_mul(size)
            .filter(|&b| isize::try_from(b).is_ok())
            .ok_or(PackError::Overflow { n, width })?;
        let mut buffer: Vec<u8> = Vec::new();
        buffer
            .try_reserve_exact(bytes)
            .map_err(|_| PackError::NoMemory { bytes })?;
        buffer.resize(bytes, 0);
        let append = |i: usize, record: &mut [u8]| {
            record[width..width + 8].copy_from_slice(&id_of(rank, i).to_ne_bytes());
            if let Some(l) = loads {
                record[width + 8..width + 16].copy_from_slice(&l[i].to_ne_bytes());
            }
            if let Some(c) = &coords {
                for (k, x) in c.row(i).iter().enumerate() {
                    record[at + 8 * k..at + 8 * k + 8].copy_from_slice(&x.to_ne_bytes());
                }
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
        Ok(Self {
            buffer,
            width,
            size,
            weighted,
            positions: (dim > 0).then_some((at, dim)),
        })
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
        // Never more bytes than the records hold: no overflow.
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

import { createHash } from 'node:crypto';
import { finished } from 'node:stream/promises';
import { GridFSBucket, MongoGridFSChunkError, MongoRuntimeError, ObjectId } from 'mongodb';
import type { Collection, Db, GridFSBucketWriteStream, GridFSChunk, GridFSFile, IndexDescription } from 'mongodb';
import type { ByteRange, FileOwner, FileStore, StoredFile } from '@gi/domain';

/** The bucket of uploaded files: collections `files.files` and `files.chunks`. */
export const FILES_BUCKET = 'files';
/** GridFS's usual chunk size: a chunk stays well under MongoDB's 16 MiB document limit. */
const CHUNK_SIZE_BYTES = 255 * 1024;
/** File ids are ObjectIds: generated here, and their timestamp dates a write that never finished. */
const FILE_ID = /^[0-9a-f]{24}$/;
/** The same owners as every file store accepts: bot and invocation ids that are plain names. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** Files whose first chunks the abandoned-write sweep checks per round trip. */
const SWEEP_BATCH = 500;

const MAJORITY = { w: 'majority', wtimeoutMS: 10_000 } as const;

/** The owner of a file, in its files document. */
interface OwnerMetadata {
  botId: string;
  invocationId: string;
}

/** Every index the bucket relies on; fixed names, so creating them at each start is a no-op. */
export const GRIDFS_INDEXES: { files: IndexDescription[]; chunks: IndexDescription[] } = {
  files: [
    // The index the GridFS specification asks for: with it in place the driver creates none itself.
    { name: 'filename_1_uploadDate_1', key: { filename: 1, uploadDate: 1 } },
    // read, delete and deleteAll by owner; listOwners walks it in order.
    { name: 'owner_upload_date', key: { 'metadata.botId': 1, 'metadata.invocationId': 1, uploadDate: 1 } },
  ],
  // Also the GridFS specification's: chunks of one file in order, each number once.
  chunks: [{ name: 'files_id_1_n_1', key: { files_id: 1, n: 1 }, unique: true }],
};

export interface GridFsFileStoreOptions {
  bucketName?: string;
  chunkSizeBytes?: number;
}

/**
 * Uploaded files in MongoDB (GridFS), so gateways and executors on different hosts share them through
 * the store itself. The owner (bot and invocation) is in each file's metadata, and every lookup filters
 * on it. Writes wait for a majority of the replica set whatever the client's settings, chunks land
 * strictly in order (a file's first chunk is always the first written and the last deleted), and the
 * files document, written last, is what makes a file exist: a write cut short by a crash leaves only
 * chunks, which deleteAbandoned removes once they are older than any upload can take.
 */
export class GridFsFileStore implements FileStore {
  private readonly bucket: GridFSBucket;
  private readonly files: Collection<GridFSFile>;
  private readonly chunks: Collection<GridFSChunk>;
  private readonly chunkSizeBytes: number;

  constructor(db: Db, options: GridFsFileStoreOptions = {}) {
    const bucketName = options.bucketName ?? FILES_BUCKET;
    this.chunkSizeBytes = options.chunkSizeBytes ?? CHUNK_SIZE_BYTES;
    this.bucket = new GridFSBucket(db, { bucketName, chunkSizeBytes: this.chunkSizeBytes, writeConcern: MAJORITY });
    const settings = { writeConcern: MAJORITY, readConcern: { level: 'majority' as const }, readPreference: 'primary' as const };
    this.files = db.collection<GridFSFile>(`${bucketName}.files`, settings);
    this.chunks = db.collection<GridFSChunk>(`${bucketName}.chunks`, settings);
  }

  /** Creates the bucket's indexes; safe to run from every process at every start. */
  async ensureIndexes(): Promise<void> {
    await this.files.createIndexes(GRIDFS_INDEXES.files);
    await this.chunks.createIndexes(GRIDFS_INDEXES.chunks);
  }

  async write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const metadata = metadataOf(owner);
    const id = new ObjectId();
    // The client's file name lives with the invocation (RequestFiles), never here.
    const upload = this.bucket.openUploadStream(id.toHexString(), { id, metadata });
    // Its failures reach the awaited writes and the end below; unheard, an 'error' event would crash.
    upload.on('error', () => undefined);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.byteLength;
        // At most one chunk per write, each acknowledged before the next: never two inserts in flight.
        for (let at = 0; at < chunk.byteLength; at += this.chunkSizeBytes) {
          await writeTo(upload, chunk.subarray(at, at + this.chunkSizeBytes));
        }
      }
      // Resolves once the files document is written (majority): the file exists from then on.
      await endOf(upload);
    } catch (error) {
      upload.destroy();
      // When this fails too (the server is gone), deleteAbandoned removes the chunks later.
      await this.remove([id]).catch(() => undefined);
      throw error;
    }
    return { id: id.toHexString(), size, sha256: hash.digest('hex') };
  }

  async read(owner: FileOwner, id: string, range?: ByteRange): Promise<Uint8Array | null> {
    if (range && !(Number.isSafeInteger(range.offset) && range.offset >= 0 && Number.isSafeInteger(range.length) && range.length >= 0)) {
      throw new RangeError(`Invalid byte range ${JSON.stringify(range)}.`);
    }
    const filter = ownerFilter(owner);
    if (!FILE_ID.test(id)) return null;
    const file = await this.files.findOne({ _id: new ObjectId(id), ...filter }, { projection: { _id: 1, length: 1 } });
    if (!file) return null;
    const offset = Math.min(range?.offset ?? 0, file.length);
    const length = Math.min(range?.length ?? file.length, file.length - offset);
    if (length === 0) return new Uint8Array(0);
    // A delete racing the download removes the files document first, then the chunks: the driver's own
    // lookup finds nothing (ENOENT), a chunk is missing (ChunkIsMissing), or the chunks simply end early.
    // Each reads as "no such file" once the file is known gone; with the file still there, as damage.
    const parts: Buffer[] = [];
    try {
      for await (const part of this.bucket.openDownloadStream(file._id, { start: offset, end: offset + length })) parts.push(part as Buffer);
    } catch (error) {
      if (error instanceof MongoGridFSChunkError) {
        if (await this.isGone(file._id, filter)) return null;
      } else if (error instanceof MongoRuntimeError && error.code === 'ENOENT') {
        return null;
      }
      throw error;
    }
    const bytes = Buffer.concat(parts);
    if (bytes.length === length) return bytes;
    if (await this.isGone(file._id, filter)) return null;
    throw new Error(`File ${id} lacks chunks: it ended after ${bytes.length} of the ${length} bytes asked for.`);
  }

  private async isGone(id: ObjectId, filter: ReturnType<typeof ownerFilter>): Promise<boolean> {
    return (await this.files.findOne({ _id: id, ...filter }, { projection: { _id: 1 } })) === null;
  }

  async delete(owner: FileOwner, id: string): Promise<boolean> {
    const filter = ownerFilter(owner);
    if (!FILE_ID.test(id)) return false;
    const _id = new ObjectId(id);
    const { deletedCount } = await this.files.deleteOne({ _id, ...filter });
    if (deletedCount === 0) return false;
    await this.removeChunks([_id]);
    return true;
  }

  async deleteAll(owner: FileOwner): Promise<void> {
    const found = await this.files.find(ownerFilter(owner), { projection: { _id: 1 } }).toArray();
    // By id, not by owner: a file of this owner recorded meanwhile keeps its document and its chunks.
    if (found.length > 0) await this.remove(found.map((file) => file._id));
  }

  async deleteBot(botId: string): Promise<void> {
    const found = await this.files.find({ 'metadata.botId': botId }, { projection: { _id: 1 } }).toArray();
    if (found.length > 0) await this.remove(found.map((file) => file._id));
  }

  async usedBytes(botId: string): Promise<number> {
    const [sum] = await this.files.aggregate<{ bytes: number }>([{ $match: { 'metadata.botId': botId } }, { $group: { _id: null, bytes: { $sum: '$length' } } }]).toArray();
    return sum?.bytes ?? 0;
  }

  async listOwners(before: number): Promise<FileOwner[]> {
    // Sorted on the owner index, so the server can take each owner's newest upload from the index.
    const rows = await this.files
      .aggregate<{ _id: Partial<OwnerMetadata> }>(
        [
          { $sort: { 'metadata.botId': 1, 'metadata.invocationId': 1, uploadDate: 1 } },
          { $group: { _id: { botId: '$metadata.botId', invocationId: '$metadata.invocationId' }, lastUpload: { $last: '$uploadDate' } } },
          { $match: { lastUpload: { $lt: new Date(before) } } },
        ],
        { allowDiskUse: true },
      )
      .toArray();
    return rows.flatMap(({ _id }) => (typeof _id.botId === 'string' && typeof _id.invocationId === 'string' ? [{ botId: _id.botId, id: _id.invocationId }] : []));
  }

  async deleteAbandoned(before: number): Promise<number> {
    // A file id's timestamp is when its write began; every write starts with chunk 0 and deletes it last.
    const begunBefore = ObjectId.createFromTime(Math.floor(before / 1000));
    let after: ObjectId | null = null;
    let removed = 0;
    for (;;) {
      const firstChunks: Array<Pick<GridFSChunk, 'files_id'>> = await this.chunks
        .find({ files_id: after ? { $gt: after, $lt: begunBefore } : { $lt: begunBefore }, n: 0 }, { projection: { _id: 0, files_id: 1 } })
        .sort({ files_id: 1 })
        .limit(SWEEP_BATCH)
        .toArray();
      if (firstChunks.length === 0) break;
      const ids = firstChunks.map((chunk) => chunk.files_id);
      const recorded = await this.files.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
      const known = new Set(recorded.map((file) => String(file._id)));
      const abandoned = ids.filter((id) => !known.has(String(id)));
      if (abandoned.length > 0) await this.removeChunks(abandoned);
      removed += abandoned.length;
      if (firstChunks.length < SWEEP_BATCH) break;
      after = ids[ids.length - 1];
    }
    return removed;
  }

  /** Files document first (the file is gone for readers at once), then its chunks. */
  private async remove(ids: ObjectId[]): Promise<void> {
    await this.files.deleteMany({ _id: { $in: ids } });
    await this.removeChunks(ids);
  }

  /** Chunk 0 last: whatever an interrupted removal leaves still starts with it, where deleteAbandoned looks. */
  private async removeChunks(ids: ObjectId[]): Promise<void> {
    await this.chunks.deleteMany({ files_id: { $in: ids }, n: { $gt: 0 } });
    await this.chunks.deleteMany({ files_id: { $in: ids } });
  }
}

/** The GridFS file store on `db`, its indexes created. */
export async function createGridFsFileStore(db: Db, options: GridFsFileStoreOptions = {}): Promise<GridFsFileStore> {
  const store = new GridFsFileStore(db, options);
  await store.ensureIndexes();
  return store;
}

function metadataOf(owner: FileOwner): OwnerMetadata {
  if (!NAME.test(owner.botId) || !NAME.test(owner.id)) throw new Error(`Invalid file owner ${JSON.stringify(owner)}.`);
  return { botId: owner.botId, invocationId: owner.id };
}

function ownerFilter(owner: FileOwner): { 'metadata.botId': string; 'metadata.invocationId': string } {
  const { botId, invocationId } = metadataOf(owner);
  return { 'metadata.botId': botId, 'metadata.invocationId': invocationId };
}

/** Resolves once the stream has taken the bytes: stored, when they completed a chunk. */
function writeTo(upload: GridFSBucketWriteStream, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => upload.write(bytes, (error) => (error ? reject(error) : resolve())));
}

/** Resolves once the files document is written, rejects when the stream failed. */
async function endOf(upload: GridFSBucketWriteStream): Promise<void> {
  upload.end();
  await finished(upload);
}

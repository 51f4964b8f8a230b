/** Reads and decodes request bodies: JSON, or YAML for server-side apply. Bounded in size. */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, StatusError } from '../store/status.ts';
import { decodeKubernetesProtobuf } from './protobuf.ts';

const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The raw body; 413 when larger than the apiserver's 3 MiB limit. */
export async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES)
      throw new StatusError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Decodes a body by its content type (JSON, YAML, Kubernetes protobuf); an empty body is undefined. 400 when it does not parse. */
export function decodeBody(bytes: Buffer, contentType: string | undefined): unknown {
  if ((contentType ?? '').includes('application/vnd.kubernetes.protobuf') && bytes.length > 0) {
    return decodeKubernetesProtobuf(bytes);
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  const yaml = (contentType ?? '').includes('yaml');
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw badRequest(`the body of the request could not be decoded: ${why}`);
  }
}

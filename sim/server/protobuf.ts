/**
 * Decodes the Kubernetes protobuf envelope (`k8s\0` + runtime.Unknown) for the few request bodies
 * kubectl sends as protobuf: Eviction, DeleteOptions, the access reviews, TokenRequest
 * (`kubectl create token`), SelfSubjectReview (`kubectl auth whoami`), and the Namespace and
 * ServiceAccount of `kubectl create namespace|serviceaccount` (kubectl's typed clients
 * encode built-in types as `application/vnd.kubernetes.protobuf`). Field numbers are those of the
 * k8s.io/api `generated.proto` files. Unknown fields are skipped.
 */
import { badRequest, StatusError } from '../store/status.ts';

type FieldType = 'string' | 'int64' | 'bool' | Schema;
interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
  /** A `map<string,string>` field (repeated key=1/value=2 entries). */
  map?: boolean;
}
type Schema = Readonly<Record<number, Field>>;

const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  11: { name: 'labels', type: 'string', map: true },
  12: { name: 'annotations', type: 'string', map: true },
};

const DELETE_OPTIONS: Schema = {
  1: { name: 'gracePeriodSeconds', type: 'int64' },
  2: {
    name: 'preconditions',
    type: { 1: { name: 'uid', type: 'string' }, 2: { name: 'resourceVersion', type: 'string' } },
  },
  3: { name: 'orphanDependents', type: 'bool' },
  4: { name: 'propagationPolicy', type: 'string' },
  5: { name: 'dryRun', type: 'string', repeated: true },
};

const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};

const NON_RESOURCE_ATTRIBUTES: Schema = { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } };

const SELF_REVIEW_SPEC: Schema = {
  1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
  2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
};

const REVIEW_SPEC: Schema = {
  ...SELF_REVIEW_SPEC,
  3: { name: 'user', type: 'string' },
  4: { name: 'groups', type: 'string', repeated: true },
  6: { name: 'uid', type: 'string' },
};

const BOUND_OBJECT_REFERENCE: Schema = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'apiVersion', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
};

const TOKEN_REQUEST_SPEC: Schema = {
  1: { name: 'audiences', type: 'string', repeated: true },
  3: { name: 'boundObjectRef', type: BOUND_OBJECT_REFERENCE },
  4: { name: 'expirationSeconds', type: 'int64' },
};

/** Message schemas by `apiVersion/kind`. */
const KINDS: Readonly<Record<string, Schema>> = {
  'policy/v1/Eviction': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'deleteOptions', type: DELETE_OPTIONS },
  },
  'policy/v1beta1/Eviction': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'deleteOptions', type: DELETE_OPTIONS },
  },
  'meta.k8s.io/v1/DeleteOptions': DELETE_OPTIONS,
  'v1/DeleteOptions': DELETE_OPTIONS,
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: SELF_REVIEW_SPEC },
  },
  'authorization.k8s.io/v1/SubjectAccessReview': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: REVIEW_SPEC },
  },
  'authentication.k8s.io/v1/TokenRequest': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: TOKEN_REQUEST_SPEC },
  },
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: { name: 'metadata', type: OBJECT_META } },
  'v1/Namespace': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  },
  'v1/ServiceAccount': {
    1: { name: 'metadata', type: OBJECT_META },
    4: { name: 'automountServiceAccountToken', type: 'bool' },
  },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } },
  },
};

/** A cursor over protobuf wire bytes. */
class Reader {
  readonly #bytes: Uint8Array;
  #pos: number;
  readonly #end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.#bytes = bytes;
    this.#pos = start;
    this.#end = end;
  }

  get done(): boolean {
    return this.#pos >= this.#end;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.#pos >= this.#end) throw badRequest('protobuf: truncated varint');
      const byte = this.#bytes[this.#pos++] ?? 0;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  bytes(): Uint8Array {
    const length = Number(this.varint());
    if (this.#pos + length > this.#end) throw badRequest('protobuf: truncated field');
    const slice = this.#bytes.subarray(this.#pos, this.#pos + length);
    this.#pos += length;
    return slice;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.#pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.#pos += 4;
    else throw badRequest(`protobuf: unsupported wire type ${wireType}`);
  }
}

const text = new TextDecoder();

function scalar(reader: Reader, type: 'string' | 'int64' | 'bool'): unknown {
  if (type === 'string') return text.decode(reader.bytes());
  const value = reader.varint();
  return type === 'bool' ? value !== 0n : Number(BigInt.asIntN(64, value));
}

function mapEntry(bytes: Uint8Array): [string, string] {
  const entry = decodeMessage(bytes, { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: 'string' } });
  return [String(entry.key ?? ''), String(entry.value ?? '')];
}

function readField(reader: Reader, field: Field, out: Record<string, unknown>): void {
  if (field.map) {
    const [key, value] = mapEntry(reader.bytes());
    out[field.name] = { ...(out[field.name] as object), [key]: value };
    return;
  }
  const value = typeof field.type === 'object' ? decodeMessage(reader.bytes(), field.type) : scalar(reader, field.type);
  if (field.repeated) out[field.name] = [...((out[field.name] as unknown[]) ?? []), value];
  else out[field.name] = value;
}

/** Decodes one message by schema. */
export function decodeMessage(bytes: Uint8Array, schema: Schema): Record<string, unknown> {
  const reader = new Reader(bytes);
  const out: Record<string, unknown> = {};
  while (!reader.done) {
    const key = Number(reader.varint());
    const field = schema[key >>> 3];
    if (field) readField(reader, field, out);
    else reader.skip(key & 7);
  }
  return out;
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

const UNKNOWN: Schema = {
  1: { name: 'typeMeta', type: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } },
  2: { name: 'raw', type: 'string' },
};

/** Decodes a `k8s\0`-prefixed protobuf body to the JSON shape of its kind; 415 for kinds not listed. */
export function decodeKubernetesProtobuf(body: Uint8Array): Record<string, unknown> {
  if (!MAGIC.every((byte, i) => body[i] === byte)) throw badRequest('protobuf: missing the k8s envelope');
  const reader = new Reader(body, MAGIC.length);
  let typeMeta: Record<string, unknown> = {};
  let raw: Uint8Array = new Uint8Array();
  while (!reader.done) {
    const key = Number(reader.varint());
    const number = key >>> 3;
    if (number === 1) typeMeta = decodeMessage(reader.bytes(), UNKNOWN[1]?.type as Schema);
    else if (number === 2) raw = reader.bytes();
    else reader.skip(key & 7);
  }
  const apiVersion = String(typeMeta.apiVersion ?? '');
  const kind = String(typeMeta.kind ?? '');
  const schema = KINDS[`${apiVersion}/${kind}`];
  if (!schema) {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      `the simulator does not decode ${apiVersion} ${kind} from protobuf; send JSON`,
    );
  }
  return { apiVersion, kind, ...decodeMessage(raw, schema) };
}

/**
 * CustomResourceDefinition → served resource type, and the status the apiextensions apiserver writes
 * once it accepts the names (kubectl waits for `Established` in some flows).
 */
import { type Schema, schemaProblems } from './schema/index.ts';
import { invalid, type StatusCause } from './status.ts';
import type { KubeObject, PrinterColumn, ResourceType } from './types.ts';

interface CrdVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: unknown; scale?: unknown };
  additionalPrinterColumns?: PrinterColumn[];
  schema?: { openAPIV3Schema?: Schema };
}

interface CrdSpec {
  group?: string;
  scope?: string;
  names?: {
    plural?: string;
    singular?: string;
    kind?: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
  versions?: CrdVersion[];
}

const CRD_KIND = { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' };

function problemsOf(name: string, spec: CrdSpec): StatusCause[] {
  const causes: StatusCause[] = [];
  // The cause's reason is the field.ErrorType whose wording starts the message ("Required value", …).
  const check = (ok: boolean, field: string, message = 'Required value', reason = 'FieldValueRequired'): void => {
    if (!ok) causes.push({ reason, message, field });
  };
  check(Boolean(spec.group), 'spec.group');
  check(Boolean(spec.names?.plural), 'spec.names.plural');
  check(Boolean(spec.names?.kind), 'spec.names.kind');
  if (!spec.scope) check(false, 'spec.scope');
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    const message = `Unsupported value: "${spec.scope}": supported values: "Cluster", "Namespaced"`;
    check(false, 'spec.scope', message, 'FieldValueNotSupported');
  }
  check(
    (spec.versions ?? []).some((v) => v.served && v.name),
    'spec.versions',
    'Required value: must have at least one served version',
  );
  check(
    name === `${spec.names?.plural}.${spec.group}`,
    'metadata.name',
    `Invalid value: "${name}": must be spec.names.plural+"."+spec.group`,
    'FieldValueInvalid',
  );
  (spec.versions ?? []).forEach((version, index) => {
    const schema = version.schema?.openAPIV3Schema;
    if (!schema) return;
    // A bad pattern, or a rule outside the simulator's CEL subset, refuses the CRD: never skipped silently.
    for (const problem of schemaProblems(schema, `spec.versions[${index}].schema.openAPIV3Schema`)) {
      const message = `Invalid value: ${JSON.stringify(problem.value)}: ${problem.detail}`;
      check(false, problem.field, message, 'FieldValueInvalid');
    }
  });
  return causes;
}

/** The resource a CRD defines; 422 Invalid naming each bad field. */
export function resourceTypeOf(crd: KubeObject): ResourceType {
  const spec = (crd.spec ?? {}) as CrdSpec;
  const name = crd.metadata.name ?? '';
  const causes = problemsOf(name, spec);
  if (causes.length > 0) throw invalid(CRD_KIND, name, causes);
  const served = (spec.versions ?? []).filter((v) => v.served && v.name);
  // Preferred version first: the storage version, as kubectl's discovery expects.
  served.sort((a, b) => Number(Boolean(b.storage)) - Number(Boolean(a.storage)));
  const first = served[0];
  const names = spec.names ?? {};
  const kind = names.kind ?? '';
  const type: ResourceType = {
    group: spec.group ?? '',
    versions: served.map((v) => v.name ?? ''),
    resource: names.plural ?? '',
    singular: names.singular ?? kind.toLowerCase(),
    kind,
    listKind: names.listKind ?? `${kind}List`,
    namespaced: spec.scope === 'Namespaced',
    subresources: [
      ...(first?.subresources?.status ? ['status'] : []),
      ...(first?.subresources?.scale ? ['scale'] : []),
    ],
    hasGeneration: true,
    definedBy: name,
  };
  addOptionalFields(type, names, first);
  return type;
}

/** Short names, categories, printer columns and the schema, each only when the CRD has it. */
function addOptionalFields(type: ResourceType, names: NonNullable<CrdSpec['names']>, version?: CrdVersion): void {
  if (names.shortNames) type.shortNames = names.shortNames;
  if (names.categories) type.categories = names.categories;
  if (version?.additionalPrinterColumns) type.printerColumns = version.additionalPrinterColumns;
  if (version?.schema?.openAPIV3Schema) type.schema = version.schema.openAPIV3Schema;
}

/** The status the apiextensions apiserver reports for an accepted CRD. */
export function establishedStatus(crd: KubeObject, nowIso: string): Record<string, unknown> {
  const spec = (crd.spec ?? {}) as CrdSpec;
  const condition = (type: string, reason: string, message: string): Record<string, unknown> => ({
    type,
    status: 'True',
    lastTransitionTime: nowIso,
    reason,
    message,
  });
  return {
    acceptedNames: spec.names ?? {},
    storedVersions: (spec.versions ?? []).filter((v) => v.storage).map((v) => v.name),
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
  };
}

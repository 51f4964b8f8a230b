import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DETAIL_TYPES, parseBusEvent, parseDetail, toMaintenanceRequest } from '../../../lib/bus/contracts/index.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';

const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/events/maintenance-requested.json', import.meta.url), 'utf8'),
);
const validDetail = () => structuredClone(fixture.detail) as Record<string, unknown>;

/** Parses a Maintenance Requested detail and returns the InvalidInput message, failing if it was accepted. */
function rejection(detail: unknown): string {
  try {
    parseDetail(DETAIL_TYPES.maintenanceRequested, detail);
  } catch (error) {
    assert.ok(error instanceof InvalidInput, `expected InvalidInput, got ${String(error)}`);
    return error.message;
  }
  assert.fail('the event was accepted');
}

describe('Maintenance Requested contract', () => {
  it('accepts the sample event and normalises it with drain defaults', () => {
    const event = parseBusEvent(fixture);
    assert.equal(event.detailType, 'Maintenance Requested');
    const request = toMaintenanceRequest(event.detail as never, KUBECTL_DRAIN_DEFAULTS);
    assert.deepEqual(request.target, { nodeName: 'node-1' });
    assert.equal(request.drain.ignoreDaemonSets, true);
    assert.equal(request.drain.force, false, 'unset options keep the defaults');
    assert.equal(request.drain.gracePeriodSeconds, -1);
  });

  const cases: { name: string; mutate: (d: Record<string, unknown>) => void; message: string }[] = [
    {
      name: 'missing target',
      mutate: (d) => {
        delete d.target;
      },
      message: 'invalid "Maintenance Requested" event: target: is required',
    },
    {
      // A wrong type is not a missing field (zod reports the input only when asked: safeParseReporting).
      name: 'reason of the wrong type',
      mutate: (d) => {
        d.reason = 42;
      },
      message: 'invalid "Maintenance Requested" event: reason: Invalid input: expected string, received number',
    },
    {
      name: 'empty target',
      mutate: (d) => {
        d.target = {};
      },
      message:
        'invalid "Maintenance Requested" event: target: must name exactly one of nodeName, providerID, instance (none given)',
    },
    {
      name: 'two targets',
      mutate: (d) => {
        d.target = { nodeName: 'node-1', providerID: 'aws:///eu-west-1a/i-0abc' };
      },
      message:
        'invalid "Maintenance Requested" event: target: must name exactly one of nodeName, providerID, instance (got nodeName and providerID)',
    },
    {
      name: 'unknown origin',
      mutate: (d) => {
        d.origin = 'pagerduty';
      },
      message:
        'invalid "Maintenance Requested" event: origin: must be one of cordon, node-maintenance, azure, aws, gcp, alibaba, manual, schedule',
    },
    {
      name: 'unknown version',
      mutate: (d) => {
        d.version = '2';
      },
      message:
        'invalid "Maintenance Requested" event: version: unknown version "2" of "Maintenance Requested"; this drainbridge understands version 1',
    },
    {
      name: 'missing version',
      mutate: (d) => {
        delete d.version;
      },
      message: 'invalid "Maintenance Requested" event: version: is required',
    },
    {
      name: 'extra field',
      mutate: (d) => {
        d.priority = 'high';
      },
      message:
        'invalid "Maintenance Requested" event: priority: unknown field (not part of this version of the contract)',
    },
    {
      name: 'extra field inside drain options',
      mutate: (d) => {
        d.drain = { ignoreDaemonSets: true, deleteLocalData: true };
      },
      message:
        'invalid "Maintenance Requested" event: drain.deleteLocalData: unknown field (not part of this version of the contract)',
    },
    {
      name: 'oversized node name',
      mutate: (d) => {
        d.target = { nodeName: `n${'a'.repeat(253)}` };
      },
      message:
        'invalid "Maintenance Requested" event: target.nodeName: must be at most 253 characters (a Kubernetes node name)',
    },
    {
      name: 'odd node name (uppercase, underscore)',
      mutate: (d) => {
        d.target = { nodeName: 'Node_1' };
      },
      message:
        'invalid "Maintenance Requested" event: target.nodeName: must be a valid node name: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
    },
    {
      name: 'odd node name (path traversal)',
      mutate: (d) => {
        d.target = { nodeName: '../node-1' };
      },
      message:
        'invalid "Maintenance Requested" event: target.nodeName: must be a valid node name: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
    },
    {
      name: 'empty node name',
      mutate: (d) => {
        d.target = { nodeName: '' };
      },
      message: 'invalid "Maintenance Requested" event: target.nodeName: must not be empty',
    },
    {
      name: 'deadline before notBefore',
      mutate: (d) => {
        d.notBefore = '2026-11-21T15:00:00Z';
      },
      message: 'invalid "Maintenance Requested" event: deadline: must be later than notBefore',
    },
    {
      name: 'deadline without a time zone',
      mutate: (d) => {
        d.deadline = '2026-11-21 14:00';
      },
      message:
        'invalid "Maintenance Requested" event: deadline: must be an ISO 8601 date-time with a time zone, e.g. 2026-11-21T10:00:00Z',
    },
    {
      name: 'unknown cloud provider',
      mutate: (d) => {
        d.target = { instance: { provider: 'oracle', id: 'ocid1' } };
      },
      message:
        'invalid "Maintenance Requested" event: target.instance.provider: must be one of azure, aws, gcp, alibaba, openstack',
    },
    {
      name: 'negative timeout',
      mutate: (d) => {
        d.drain = { timeoutSeconds: -5 };
      },
      message: 'invalid "Maintenance Requested" event: drain.timeoutSeconds: must be 0 or more',
    },
  ];

  for (const c of cases) {
    it(`rejects ${c.name}, naming the field`, () => {
      const detail = validDetail();
      c.mutate(detail);
      assert.equal(rejection(detail), c.message);
    });
  }

  it('lists every bad field at once', () => {
    const detail = validDetail();
    detail.origin = 'x';
    detail.requestId = '';
    const error = (() => {
      try {
        parseDetail(DETAIL_TYPES.maintenanceRequested, detail);
      } catch (e) {
        return e as InvalidInput;
      }
      return undefined;
    })();
    assert.ok(error);
    assert.deepEqual(error.problems.map((p) => p.path).sort(), ['origin', 'requestId']);
  });

  it('rejects a detail that is not an object', () => {
    assert.equal(rejection('node-1'), 'invalid "Maintenance Requested" event: detail: must be a JSON object');
    assert.equal(rejection(null), 'invalid "Maintenance Requested" event: detail: must be a JSON object');
  });

  it('accepts any valid DNS-1123 node name and refuses names the API server would refuse', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), (labels) => {
        const detail = validDetail();
        detail.target = { nodeName: labels.join('.') };
        parseDetail(DETAIL_TYPES.maintenanceRequested, detail);
      }),
    );
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 30 }).filter((s) => /[^a-z0-9.-]/.test(s)),
        (name) => {
          const detail = validDetail();
          detail.target = { nodeName: name };
          assert.match(rejection(detail), /target\.nodeName: must be a valid node name/);
        },
      ),
    );
  });
});

describe('bus envelope', () => {
  it('rejects an unknown detail-type, naming the ones it knows', () => {
    assert.throws(() => parseBusEvent({ ...fixture, 'detail-type': 'Node Rebooted' }), {
      name: 'InvalidInput',
      message:
        /^invalid event: detail-type: must be one of Maintenance Requested, .*Node Restored, Admission Paused, Admission Resumed \(got "Node Rebooted"\)$/,
    });
  });

  it('rejects a detail-type from the wrong source', () => {
    assert.throws(() => parseBusEvent({ ...fixture, source: 'drainbridge.workflow' }), {
      name: 'InvalidInput',
      message:
        'invalid event: source: "Maintenance Requested" events come from "drainbridge.requests" (got "drainbridge.workflow")',
    });
  });

  it('prefixes detail fields with "detail."', () => {
    const event = structuredClone(fixture);
    event.detail.target = {};
    assert.throws(() => parseBusEvent(event), {
      message:
        'invalid "Maintenance Requested" event: detail.target: must name exactly one of nodeName, providerID, instance (none given)',
    });
  });

  it('validates the outcome events strictly as well', () => {
    const restored = {
      version: '1',
      requestId: 'r1',
      requester: 'alice',
      target: { nodeName: 'node-1' },
      nodeName: 'node-1',
      lastHold: true,
      uncordoned: true,
      novaServiceEnabled: false,
      leftAlone: [],
    };
    assert.equal(parseDetail(DETAIL_TYPES.nodeRestored, restored).uncordoned, true);
    assert.throws(() => parseDetail(DETAIL_TYPES.nodeRestored, { ...restored, uncordoned: 'yes' }), {
      message: /uncordoned: /,
    });
  });
});

describe('the optional cloud notice field', () => {
  const notice = {
    provider: 'azure',
    source: 'azure-scheduled-events',
    eventId: '602d9444-d2cd-49c7-8624-8643e7171297',
    eventType: 'Reboot',
    action: 'evacuate',
  };

  it('is accepted on Maintenance Requested and Maintenance Ended, and optional', () => {
    const requested = parseDetail(DETAIL_TYPES.maintenanceRequested, { ...validDetail(), notice });
    assert.deepEqual(requested.notice, notice);
    assert.equal(parseDetail(DETAIL_TYPES.maintenanceRequested, validDetail()).notice, undefined);
    const ended = { version: '1', requestId: 'r1', requester: 'agent', origin: 'azure', target: { nodeName: 'n' } };
    assert.deepEqual(parseDetail(DETAIL_TYPES.maintenanceEnded, { ...ended, notice }).notice, notice);
  });

  it('names the bad notice field', () => {
    assert.match(
      rejection({ ...validDetail(), notice: { ...notice, provider: 'ibm' } }),
      /notice\.provider: must be one of azure, aws, gcp/,
    );
    assert.match(
      rejection({ ...validDetail(), notice: { ...notice, action: 'panic' } }),
      /notice\.action: must be one of evacuate, ignore/,
    );
    assert.match(rejection({ ...validDetail(), notice: { ...notice, extra: 1 } }), /notice\.extra: unknown field/);
  });
});

describe('generated JSON Schema', () => {
  it('docs/schemas is current (run `npm run schemas` after changing a contract)', async () => {
    const { generateJsonSchemas } = await import('../../../lib/bus/contracts/json-schema.ts');
    for (const [file, text] of generateJsonSchemas()) {
      const onDisk = readFileSync(new URL(`../../../docs/schemas/${file}`, import.meta.url), 'utf8');
      assert.equal(onDisk, text, `docs/schemas/${file} is stale`);
    }
  });
});

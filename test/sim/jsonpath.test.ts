/** The JSONPath subset of CRD printer columns (client-go jsonpath as apiextensions' table convertor uses it). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPathValue, parseJsonPath } from '../../sim/server/jsonpath.ts';

const vmi = {
  metadata: { name: 'a', labels: { 'kubevirt.io/vm': 'a' } },
  status: {
    phase: 'Running',
    interfaces: [{ ipAddress: '10.244.1.5' }, { ipAddress: '10.0.0.9' }],
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable' },
    ],
  },
};

describe('printer-column JSONPath', () => {
  it('reads fields, indexes, bracketed keys and equality filters', () => {
    assert.equal(jsonPathValue(vmi, '.status.phase'), 'Running');
    assert.equal(jsonPathValue(vmi, '.status.interfaces[0].ipAddress'), '10.244.1.5');
    assert.equal(jsonPathValue(vmi, ".metadata.labels['kubevirt.io/vm']"), 'a');
    assert.equal(jsonPathValue(vmi, ".status.conditions[?(@.type=='LiveMigratable')].status"), 'False');
    assert.equal(jsonPathValue(vmi, '.status.conditions[?(@.type=="Ready")].status'), 'True');
    assert.equal(jsonPathValue(vmi, '{.status.phase}'), 'Running', 'the braces kubectl adds are accepted');
  });

  it('yields undefined for what is missing or outside the subset', () => {
    assert.equal(jsonPathValue(vmi, ".status.conditions[?(@.type=='Paused')].status"), undefined);
    assert.equal(jsonPathValue(vmi, '.status.interfaces[5].ipAddress'), undefined);
    assert.equal(jsonPathValue(vmi, '.spec.nothing'), undefined);
    assert.equal(parseJsonPath('.status.interfaces[*].ipAddress'), undefined);
    assert.equal(jsonPathValue(vmi, '.status..phase'), undefined);
  });
});

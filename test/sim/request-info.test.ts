/** Request paths → verb/resource/namespace/name, as the apiserver's RequestInfoFactory derives them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo } from '../../sim/server/request-info.ts';

const parse = (method: string, path: string) => {
  const info = parseRequestInfo(method, new URL(path, 'https://127.0.0.1'));
  return [info.verb, info.group, info.version, info.resource, info.subresource, info.namespace, info.name];
};

describe('parseRequestInfo', () => {
  const cases: [string, string, string[]][] = [
    ['GET', '/api/v1/pods', ['list', '', 'v1', 'pods', '', '', '']],
    ['GET', '/api/v1/pods?watch=true', ['watch', '', 'v1', 'pods', '', '', '']],
    ['GET', '/api/v1/watch/namespaces/a/pods', ['watch', '', 'v1', 'pods', '', 'a', '']],
    ['GET', '/api/v1/namespaces/a/pods/p', ['get', '', 'v1', 'pods', '', 'a', 'p']],
    ['POST', '/api/v1/namespaces/a/pods/p/eviction', ['create', '', 'v1', 'pods', 'eviction', 'a', 'p']],
    ['PATCH', '/api/v1/nodes/n1', ['patch', '', 'v1', 'nodes', '', '', 'n1']],
    ['PUT', '/api/v1/nodes/n1/status', ['update', '', 'v1', 'nodes', 'status', '', 'n1']],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/a/deployments',
      ['deletecollection', 'apps', 'v1', 'deployments', '', 'a', ''],
    ],
    ['GET', '/api/v1/namespaces/a', ['get', '', 'v1', 'namespaces', '', 'a', 'a']],
    ['PUT', '/api/v1/namespaces/a/finalize', ['update', '', 'v1', 'namespaces', 'finalize', 'a', 'a']],
    ['GET', '/api/v1/namespaces', ['list', '', 'v1', 'namespaces', '', '', '']],
  ];
  for (const [method, path, expected] of cases) {
    it(`${method} ${path}`, () => assert.deepEqual(parse(method, path), expected));
  }

  it('treats discovery and other paths as non-resource requests', () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/openapi/v3']) {
      const info = parseRequestInfo('GET', new URL(path, 'https://127.0.0.1'));
      assert.equal(info.isResourceRequest, false, path);
      assert.equal(info.verb, 'get');
    }
  });
});

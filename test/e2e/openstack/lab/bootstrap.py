#!/usr/bin/python3
"""Lab bootstrap steps that need the OpenStack APIs (run with Debian's /usr/bin/python3).

  bootstrap.py register       service project, service users, catalog entries (idempotent)
  bootstrap.py finish         wait for the computes, map them to cell1, create the test flavors
  bootstrap.py wait-computes  wait until every nova-compute reports 'up' again

Reads NOVALAB, NCOMPUTE, LAB_ADMIN_PASSWORD and LAB_SERVICE_PASSWORD from the environment.
"""
import os
import subprocess
import sys
import time

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

KEYSTONE = 'http://127.0.0.1:5000/v3'
NOVA = 'http://127.0.0.1:8774/v2.1'
PLACEMENT = 'http://127.0.0.1:8778'
NCOMPUTE = int(os.environ.get('NCOMPUTE', '3'))
LAB = os.environ['NOVALAB']

# Catalog: service type -> (service name, URL). 'network' is the stub: nova asks Neutron for
# extensions and ports even for servers booted without networks.
CATALOG = {
    'compute': ('nova', NOVA),
    'placement': ('placement', PLACEMENT),
    'network': ('neutron', 'http://127.0.0.1:9696'),
}
# m1.tiny fits the blank-volume boot the suite uses (no Glance); the ephemeral disk makes the
# flavor 'local' so live migration needs no shared storage decision.
FLAVORS = [
    {'name': 'm1.tiny', 'id': '1', 'ram': 512, 'vcpus': 1, 'disk': 1, 'OS-FLV-EXT-DATA:ephemeral': 1},
    {'name': 'm1.small', 'id': '2', 'ram': 2048, 'vcpus': 1, 'disk': 20, 'OS-FLV-EXT-DATA:ephemeral': 1},
]


def admin_session():
    auth = v3.Password(auth_url=KEYSTONE, username='admin', password=os.environ['LAB_ADMIN_PASSWORD'],
                       project_name='admin', user_domain_id='default', project_domain_id='default')
    return ks_session.Session(auth=auth)


def password_works(username, password):
    auth = v3.Password(auth_url=KEYSTONE, username=username, password=password, user_domain_id='default',
                       project_name='service', project_domain_id='default')
    try:
        ks_session.Session(auth=auth).get_token()
        return True
    except Exception:  # any auth failure means: set it again
        return False


def first(items):
    return items[0] if items else None


def register():
    sess = admin_session()
    ident = {'endpoint_override': KEYSTONE, 'raise_exc': True}

    def get(path, key):
        return sess.get(path, **ident).json()[key]

    def post(path, key, body):
        return sess.post(path, json={key: body}, **ident).json()[key]

    project = first(get('/projects?name=service&domain_id=default', 'projects')) or \
        post('/projects', 'project', {'name': 'service', 'domain_id': 'default'})
    admin_role = first(get('/roles?name=admin', 'roles'))
    service_role = first(get('/roles?name=service', 'roles')) or post('/roles', 'role', {'name': 'service'})
    for name in ('nova', 'placement'):
        user = first(get(f'/users?name={name}&domain_id=default', 'users'))
        body = {'name': name, 'domain_id': 'default', 'password': os.environ['LAB_SERVICE_PASSWORD']}
        # Setting a password (even the same one) revokes the user's tokens, which running services
        # hold: touch it only when it no longer works.
        if user and not password_works(name, body['password']):
            sess.patch(f'/users/{user["id"]}', json={'user': {'password': body['password']}}, **ident)
        elif not user:
            user = post('/users', 'user', body)
        for role in (admin_role, service_role):
            sess.put(f'/projects/{project["id"]}/users/{user["id"]}/roles/{role["id"]}', **ident)
    for stype, (sname, url) in CATALOG.items():
        service = first(get(f'/services?type={stype}', 'services')) or \
            post('/services', 'service', {'name': sname, 'type': stype})
        existing = {e['interface']: e for e in get(f'/endpoints?service_id={service["id"]}', 'endpoints')}
        for interface in ('public', 'internal', 'admin'):
            if interface not in existing:
                post('/endpoints', 'endpoint', {'service_id': service['id'], 'interface': interface,
                                                'url': url, 'region_id': 'RegionOne'})
            elif existing[interface]['url'] != url:
                sess.patch(f'/endpoints/{existing[interface]["id"]}', json={'endpoint': {'url': url}}, **ident)
    print('[novalab] keystone catalog registered', flush=True)


def nova(sess, method, path, **kwargs):
    headers = {'OpenStack-API-Version': 'compute 2.88'}
    return sess.request(NOVA + path, method, headers=headers, raise_exc=False, **kwargs)


def wait_for(what, check, seconds):
    deadline = time.time() + seconds
    while True:
        try:
            value = check()
            if value:
                return value
        except Exception:  # the API may still be starting
            pass
        if time.time() > deadline:
            sys.exit(f'[novalab] timed out waiting for {what}')
        time.sleep(1)


def computes_up(sess):
    services = nova(sess, 'GET', '/os-services?binary=nova-compute').json()['services']
    up = [s for s in services if s['state'] == 'up' and s['host'].startswith('compute-')]
    return len(up) >= NCOMPUTE


def wait_computes(sess):
    wait_for(f'{NCOMPUTE} nova-compute services up', lambda: computes_up(sess), 180)
    print(f'[novalab] {NCOMPUTE} nova-compute services up', flush=True)


def finish():
    sess = admin_session()
    wait_computes(sess)
    subprocess.run([f'{LAB}/bin/nova-manage', '--config-file', f'{LAB}/etc/nova/nova.conf',
                    'cell_v2', 'discover_hosts'], check=True, stdout=subprocess.DEVNULL)
    wait_for('hypervisors', lambda: len(nova(sess, 'GET', '/os-hypervisors').json()['hypervisors']) >= NCOMPUTE, 90)
    providers = lambda: sess.get(PLACEMENT + '/resource_providers', raise_exc=False).json()['resource_providers']
    wait_for('resource providers', lambda: len(providers()) >= NCOMPUTE, 90)
    for flavor in FLAVORS:
        if nova(sess, 'GET', f'/flavors/{flavor["id"]}').status_code == 404:
            nova(sess, 'POST', '/flavors', json={'flavor': flavor})
    print(f'[novalab] {NCOMPUTE} hypervisors and resource providers, flavors {[f["name"] for f in FLAVORS]}', flush=True)


if __name__ == '__main__':
    step = sys.argv[1] if len(sys.argv) > 1 else ''
    if step == 'register':
        register()
    elif step == 'finish':
        finish()
    elif step == 'wait-computes':
        wait_computes(admin_session())
    else:
        sys.exit(__doc__)

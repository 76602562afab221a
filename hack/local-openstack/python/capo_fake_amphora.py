"""Stands in for the amphora agents of the local Octavia: the amphorae are fake Nova servers, so
nothing checks the members and nothing sends heartbeats, and Octavia's operating statuses stay
OFFLINE. This sends each allocated amphora's heartbeat to Octavia's real health manager, as the
agent inside an amphora would, with what its health checks would find: a member is UP when an
ACTIVE Nova server holds a port with the member's address, DOWN otherwise (its server stopped,
deleted, or never there); a member of a pool without a health monitor is not checked. The health
manager then sets the operating statuses of members, pools, listeners and load balancers (ONLINE,
DEGRADED, ERROR, NO_MONITOR) and fails over amphorae that stop reporting, as in production.

Usage: capo_fake_amphora.py --octavia-db URL --nova-db URL --neutron-db URL --key KEY
                            --health-manager HOST:PORT [--interval SECONDS]
"""
import argparse
import socket
import time
from urllib.parse import urlparse, unquote

import pymysql

from octavia.amphorae.backends.health_daemon import status_message


def connect(url):
    u = urlparse(url)
    return pymysql.connect(host=u.hostname, port=u.port or 3306, user=unquote(u.username),
                           password=unquote(u.password), database=u.path.lstrip('/'), autocommit=True)


def rows(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def live_addresses(nova, neutron):
    """The fixed IP addresses of the ports of ACTIVE Nova servers."""
    active = {uuid for (uuid,) in rows(nova, "SELECT uuid FROM instances WHERE deleted = 0 AND vm_state = 'active'")}
    return {ip for (ip, device) in rows(neutron, "SELECT a.ip_address, p.device_id FROM ipallocations a "
                                                 "JOIN ports p ON p.id = a.port_id") if device in active}


def heartbeats(octavia, live, seq):
    amphorae = rows(octavia, "SELECT id, load_balancer_id FROM amphora WHERE status = 'ALLOCATED' "
                             "AND load_balancer_id IS NOT NULL")
    for amphora_id, lb_id in amphorae:
        msg = {'id': amphora_id, 'seq': seq, 'listeners': {}, 'pools': {}, 'ver': 3}
        for listener_id, pool_id in rows(octavia, "SELECT id, default_pool_id FROM listener "
                                                  "WHERE load_balancer_id = '%s' AND enabled = 1" % lb_id):
            msg['listeners'][listener_id] = {'status': 'OPEN', 'stats': {
                'tx': 0, 'rx': 0, 'conns': 0, 'totconns': 0, 'ereq': 0}}
            if not pool_id:
                continue
            monitored = bool(rows(octavia, "SELECT id FROM health_monitor WHERE pool_id = '%s' AND enabled = 1" % pool_id))
            members = {}
            for member_id, address in rows(octavia, "SELECT id, ip_address FROM member "
                                                    "WHERE pool_id = '%s' AND enabled = 1" % pool_id):
                members[member_id] = ('UP' if address in live else 'DOWN') if monitored else 'no check'
            # HAProxy's backend is UP with a working member, or with none to check.
            up = not members or any(s != 'DOWN' for s in members.values())
            msg['pools']['%s:%s' % (pool_id, listener_id)] = {'status': 'UP' if up else 'DOWN', 'members': members}
        yield msg


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--octavia-db', required=True)
    p.add_argument('--nova-db', required=True)
    p.add_argument('--neutron-db', required=True)
    p.add_argument('--key', required=True)
    p.add_argument('--health-manager', required=True)
    p.add_argument('--interval', type=float, default=2)
    args = p.parse_args()
    host, port = args.health_manager.rsplit(':', 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    seq = 0
    conns = None
    while True:
        try:
            if conns is None:
                conns = [connect(args.octavia_db), connect(args.nova_db), connect(args.neutron_db)]
            octavia, nova, neutron = conns
            live = live_addresses(nova, neutron)
            for msg in heartbeats(octavia, live, seq):
                sock.sendto(status_message.wrap_envelope(msg, args.key), (host, int(port)))
            seq += 1
        except Exception as err:  # a database restarting: keep trying
            print('capo_fake_amphora: %s' % err, flush=True)
            conns = None
        time.sleep(args.interval)


if __name__ == '__main__':
    main()

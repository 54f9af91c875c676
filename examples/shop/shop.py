#!/usr/bin/env python3
"""A shop's side of topup-runner's order API, in one file: Python 3 standard library only.

 - receives the webhooks (POST /topup on SHOP_PORT), checks each Topup-Signature and prints the event;
 - given a trxid, checks the player first (POST /api/v1/players/check: the in-game name to show
   the buyer before taking their money), then places that order (POST /api/v1/orders with a
   bearer token); a player the supplier says does not exist is not ordered.

   TOPUP_ORDER_API_TOKEN=... TOPUP_ORDER_WEBHOOK_SECRET=... python3 shop.py SHOP-1001 [player id]

Settings (environment): TOPUP_API (default http://127.0.0.1:8377, the daemon's console address),
TOPUP_ORDER_API_TOKEN, TOPUP_ORDER_WEBHOOK_SECRET, SHOP_PORT (default 8400). See README.md.
"""
import hashlib, hmac, json, os, sys, time, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def verify(header, raw_body, secret, tolerance=300, now=None):
    """Topup-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">.
    Check the RAW body (before json.loads), refuse an old t, compare in constant time."""
    now = int(time.time()) if now is None else now
    parts = [p.strip().split("=", 1) for p in (header or "").split(",") if "=" in p]
    ts = [v for k, v in parts if k == "t" and v.isdigit()]
    sigs = [v.lower() for k, v in parts if k == "v1"]
    if len(ts) != 1 or not sigs or abs(now - int(ts[0])) > tolerance:
        return False
    expected = hmac.new(secret.encode(), ts[0].encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, s) for s in sigs)  # several v1=: a secret being rotated


SECRET = os.environ.get("TOPUP_ORDER_WEBHOOK_SECRET", "")
seen = set()  # delivery is at least once: the same event id may come twice


class Webhooks(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not verify(self.headers.get("Topup-Signature"), raw, SECRET):
            print("refused: bad or old signature", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        event = json.loads(raw)
        self.send_response(200)  # answer fast (2xx = delivered); do slow work after
        self.end_headers()
        if event["id"] in seen:
            return
        seen.add(event["id"])
        o = event["data"]
        extra = f" (order {o['orderId']})" if o.get("orderId") else ""
        extra += f" - {o['error']['message']}" if o.get("error") else ""
        print(f"{event['id']} {event['type']}: {o['trxid']} is {o['status']}{extra}", flush=True)

    def log_message(self, *args):
        pass


def post(path, payload):
    """POST JSON to the order API: (status, body text, Retry-After)."""
    api = os.environ.get("TOPUP_API", "http://127.0.0.1:8377")
    req = urllib.request.Request(f"{api}/api/v1{path}", data=json.dumps(payload).encode(), method="POST", headers={
        "Authorization": f"Bearer {os.environ.get('TOPUP_ORDER_API_TOKEN', '')}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode(), None
    except urllib.error.HTTPError as e:  # 4xx/5xx: problem+json with a stable code
        return e.code, e.read().decode(), e.headers.get("Retry-After")


def check_player(player):
    """The player's in-game name before the buyer pays (the token needs the scope players:check).
    200: show playerName and let the buyer confirm. 422 PLAYER_NOT_FOUND: a wrong id, ask the buyer to
    correct it. 429 / 502 / 503 (PLAYER_CHECK_RATE_LIMITED, _REFUSED, _IN_DOUBT): the check could not be
    made now, which says nothing about the player: never tell the buyer the id is wrong."""
    status, text, retry_after = post("/players/check", player)
    print(f"POST /api/v1/players/check: {status} {text}", flush=True)
    body = json.loads(text)
    if status == 200:
        return body
    if body.get("code") == "PLAYER_NOT_FOUND":
        print(f"no player {player['userId']}: not ordered (ask the buyer to correct the id)", flush=True)
    else:
        print(f"the check could not be made ({body.get('code')}): nothing is known about the player; ask again in {retry_after or 'a few'} s", flush=True)
    return None


def place(trxid, user_id="5123456701"):
    player = {"pid": "PUBG-60", "userId": user_id}
    found = check_player(player)
    if found is None:
        return
    print(f"player: {found['playerName'] or '(no name given)'} (shown to the buyer, who confirms and pays)", flush=True)
    # Resending the same trxid with the same body is safe: it answers the same order (200).
    # checkPlayer: checked again before it is stored (the answer just given is kept: no second call).
    status, text, _ = post("/orders", {"trxid": trxid, **player, "checkPlayer": True, "meta": {"shopOrder": trxid}})
    print(f"POST /api/v1/orders: {status} {text}", flush=True)


if __name__ == "__main__":
    if not SECRET:
        sys.exit("set TOPUP_ORDER_WEBHOOK_SECRET (the daemon's)")
    port = int(os.environ.get("SHOP_PORT", "8400"))
    server = ThreadingHTTPServer(("127.0.0.1", port), Webhooks)
    print(f"webhooks: listening on http://127.0.0.1:{port}/topup", flush=True)
    if len(sys.argv) > 1:
        place(*sys.argv[1:3])
    server.serve_forever()

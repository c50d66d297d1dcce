"""Stack traces shared by the evidence and query tests."""

from __future__ import annotations

PY_CHAINED_CAUSE = """\
Traceback (most recent call last):
  File "/srv/checkout/app/payments/client.py", line 57, in authorize
    resp = self.session.post(url, json=body, timeout=(3, 10))
  File "/srv/checkout/.venv/lib/python3.11/site-packages/requests/sessions.py", line 637, in post
    return self.request("POST", url, data=data, json=json, **kwargs)
  File "/usr/lib/python3.11/socket.py", line 706, in readinto
    return self._sock.recv_into(b)
TimeoutError: timed out

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/checkout/app/checkout.py", line 120, in pay
    return client.authorize(order)
  File "/srv/checkout/app/payments/client.py", line 61, in authorize
    raise PaymentProviderTimeout(f"provider did not answer for order {order.id}") from exc
payments.client.PaymentProviderTimeout: provider did not answer for order 771204
"""


PY_DURING_HANDLING = """\
Traceback (most recent call last):
  File "/app/checkout_service.py", line 88, in apply_discount
    per_item = promo.amount / basket.item_count
ZeroDivisionError: division by zero

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/checkout_service.py", line 212, in checkout
    total = apply_discount(basket, promo)
  File "/app/checkout_service.py", line 91, in apply_discount
    log.error("discount failed for %s", basket.id)
AttributeError: 'Basket' object has no attribute 'id'
"""

"""JVM stack traces: the last Caused by, frames outside the JDK, suppressed exceptions."""

from __future__ import annotations

from app.evidence.model import EvidenceFormat, Frame
from app.evidence.parse import parse_text

JAVA_CAUSED_BY = """\
Exception in thread "http-nio-8080-exec-7" com.retail.pos.sale.SaleException: sale failed
\tat com.retail.pos.sale.SaleController.submit(SaleController.java:88)
\tat org.springframework.web.servlet.FrameworkServlet.doPost(FrameworkServlet.java:914)
Caused by: com.retail.pos.pricing.PluLookupException: price service returned 503 for plu=4011
\tat com.retail.pos.pricing.PluClient.priceFor(PluClient.java:91)
\tat com.retail.pos.sale.LineBuilder.addScannedItem(LineBuilder.java:37)
\t... 12 more
Caused by: java.net.SocketTimeoutException: Read timed out
\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)
\tat java.base/java.net.Socket$SocketInputStream.read(Socket.java:976)
\tat okhttp3.internal.http1.Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.kt:186)
\tat com.retail.pos.pricing.PluHttp.get(PluHttp.java:40)
\t... 14 more
"""


JAVA_SUPPRESSED = """\
java.lang.IllegalStateException: checkout failed
\tat com.retail.pos.checkout.CheckoutHandler.complete(CheckoutHandler.java:144)
\tSuppressed: java.io.IOException: close failed
\t\tat com.retail.pos.io.Receipt.close(Receipt.java:12)
\t\tCaused by: java.lang.Error: printer gone
\t\t\tat com.retail.pos.io.Printer.flush(Printer.java:5)
"""


def test_java_root_cause_is_the_last_caused_by_and_frame_skips_the_jdk() -> None:
    parsed = parse_text(JAVA_CAUSED_BY)
    assert parsed.format is EvidenceFormat.JAVA_STACK_TRACE
    assert parsed.exception_type == "java.net.SocketTimeoutException"
    assert parsed.exception_message == "Read timed out"
    assert parsed.frame == Frame("PluHttp.java", 40, "com.retail.pos.pricing.PluHttp.get")
    assert 503 in parsed.http_statuses


def test_java_root_with_only_jdk_frames_falls_back_to_the_enclosing_app_frame() -> None:
    text = (
        "feign.RetryableException: Connection refused executing GET http://inventory-svc/v1\n"
        "    at feign.FeignException.errorExecuting(FeignException.java:268)\n"
        "    at com.shop.catalog.clients.InventoryClient.stockFor(Unknown Source)\n"
        "Caused by: java.net.ConnectException: Connection refused\n"
        "    at java.base/sun.nio.ch.Net.pollConnect(Native Method)\n"
    )
    parsed = parse_text(text)
    assert parsed.exception_type == "java.net.ConnectException"
    assert parsed.frame == Frame(
        "Unknown Source", None, "com.shop.catalog.clients.InventoryClient.stockFor"
    )


def test_java_suppressed_exceptions_are_not_the_cause() -> None:
    parsed = parse_text(JAVA_SUPPRESSED)
    assert parsed.exception_type == "java.lang.IllegalStateException"
    assert parsed.frame is not None and parsed.frame.function.endswith("CheckoutHandler.complete")

"""The HTML report in a real browser: Debian's chromium and chromium-driver through Selenium.

Two real whole-model reports: the bundled 20-step H200 training trace (PyTorch profiler, 45
kernel groups) and the A100 ncu export (4 groups, values known from tests/golden). Each test
clicks, types or hovers as a reader would and checks what the page then shows. Skipped, with the
reason, where selenium, chromium or chromedriver is missing (`.ci/run` installs them on CI).
"""

from __future__ import annotations

import base64
import shutil

import pytest

from rooflint import pipeline, reporters
from tests.helpers import FIXTURES

pytestmark = pytest.mark.e2e

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "no chromium or chromedriver on PATH (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.print_page_options import PrintOptions  # noqa: E402

TRAIN = FIXTURES / "kineto" / "h200-train-trace.json.gz"
A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(DRIVER), options=options)
    driver.set_window_size(1400, 1000)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Each report's Result and its page as a file:// URL."""
    folder = tmp_path_factory.mktemp("html")
    out = {}
    for name, path in (("train", TRAIN), ("a100", A100)):
        result = pipeline.build([str(path)])
        page = folder / f"{name}.html"
        page.write_text(reporters.render(result, "html"), encoding="utf-8")
        out[name] = (result, page.as_uri())
    return out


def _open(browser, pages, name: str, width: int = 1400):
    browser.set_window_size(width, 1000)
    browser.get(pages[name][1])
    return pages[name][0]


def _visible_ids(browser) -> list[str]:
    """The id cell of each kernel group the table shows, top to bottom."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#kernels tbody'))"
        ".filter(b => !b.hidden).map(b => b.rows[0].cells[1].textContent)"
    )


def _header(browser, text: str):
    return next(
        th for th in browser.find_elements(By.CSS_SELECTOR, "#kernels thead th") if th.text == text
    )


@pytest.mark.parametrize("name", ["train", "a100"])
@pytest.mark.parametrize("width", [1280, 1400, 1920])
def test_nothing_is_off_screen(browser, pages, name, width):
    _open(browser, pages, name, width)
    scroll, inner = browser.execute_script(
        "return [document.scrollingElement.scrollWidth, window.innerWidth]"
    )
    assert scroll <= inner
    # every column header is inside the window, the last one too
    right = browser.execute_script(
        "return Math.max(...Array.from(document.querySelectorAll('#kernels th'))"
        ".map(t => t.getBoundingClientRect().right))"
    )
    assert right <= inner


def test_rows_are_as_tall_as_their_text(browser, pages):
    _open(browser, pages, "a100")
    # the numbers' row of a group is one line of text (its name may wrap to two), not the height
    # of advice in a far column: the advice has a row of its own
    heights = browser.execute_script(
        "return Array.from(document.querySelectorAll('#kernels tr.row'))"
        ".map(r => r.getBoundingClientRect().height)"
    )
    assert len(heights) == 4 and max(heights) < 50


def test_a_header_click_sorts_the_groups(browser, pages):
    _open(browser, pages, "a100")
    # ranked by headroom: dead50 181 ms, 2ec6a2 5.44 ms, 0922ec 3.41 ms, 0eb03a 2.33 ms
    assert _visible_ids(browser) == ["dead50", "2ec6a2", "0922ec", "0eb03a"]
    _header(browser, "efficiency").click()  # 95 %, 77 %, 48 %, 24 % (tests/golden)
    assert _visible_ids(browser) == ["2ec6a2", "dead50", "0eb03a", "0922ec"]
    _header(browser, "efficiency").click()  # again: ascending
    assert _visible_ids(browser) == ["0922ec", "0eb03a", "dead50", "2ec6a2"]
    # each group's advice moved with it
    advice = browser.execute_script(
        "return document.querySelector('#kernels tbody').rows[1].textContent"
    )
    assert advice.startswith("What would help: latency-bound") and "24 %" in advice


def test_sorting_a_whole_model_trace_by_time(browser, pages):
    result = _open(browser, pages, "train")
    _header(browser, "time").click()
    expected = result.kernels.sort_values("duration_s", ascending=False, kind="stable")["id"]
    shown = _visible_ids(browser)
    times = dict(zip(result.kernels["id"], result.kernels["duration_s"], strict=True))
    assert [times[i] for i in shown] == [times[i] for i in expected]  # ties in any order
    assert len(shown) == len(result.kernels) == 45


def test_the_filter_keeps_the_groups_whose_name_matches(browser, pages):
    result = _open(browser, pages, "train")
    box = browser.find_element(By.ID, "filter")
    box.send_keys("nvjet")
    names = result.kernels["kernel"].astype(str)
    expected = result.kernels.loc[names.str.contains("nvjet"), "id"].tolist()
    assert len(expected) >= 3  # the cuBLAS GEMMs of the block, forward and backward
    assert _visible_ids(browser) == expected
    assert browser.find_element(By.ID, "shown").text == str(len(expected))
    box.clear()
    box.send_keys("NO SUCH KERNEL")
    assert _visible_ids(browser) == []
    box.clear()
    box.send_keys("a")  # clear() fires no input event; an edit does
    box.send_keys("\b")
    assert len(_visible_ids(browser)) == 45


def test_hovering_a_point_shows_its_details(browser, pages):
    _open(browser, pages, "a100")
    point = browser.find_element(By.CSS_SELECTOR, "a[href='#k-1'] circle.pt")
    tip = browser.find_element(By.ID, "tip")
    assert not tip.is_displayed()
    ActionChains(browser).move_to_element(point).perform()
    assert tip.is_displayed()
    # dead50, the CUTLASS GEMM: 790 ms, 116 FLOP/byte, compute-bound at 77 % (tests/golden)
    lines = tip.text.splitlines()
    assert lines[0].startswith("#1 dead50 void cutlass::Kernel<cutlass::gemm::kernel::Gemm<")
    assert lines[1:] == [
        "time 790 ms (87.2 % of the total)",
        "116 FLOP/byte (DRAM), 130 TFLOP/s",
        "compute-bound, 77 % of its roof",
    ]
    ActionChains(browser).move_by_offset(0, 400).perform()
    assert not tip.is_displayed()


def test_a_point_links_to_its_row(browser, pages):
    _open(browser, pages, "a100")
    browser.find_element(By.CSS_SELECTOR, "a[href='#k-2'] circle.pt").click()
    target = browser.execute_script("return document.querySelector(':target').id")
    assert target == "k-2"
    row = browser.find_element(By.ID, "k-2")
    assert row.find_element(By.CSS_SELECTOR, "td.id").text == "2ec6a2"
    colour = row.value_of_css_property("background-color")
    assert colour == "rgba(255, 242, 184, 1)"  # the highlight


def test_the_page_loads_nothing_and_its_script_passes_its_own_policy(browser, pages):
    _open(browser, pages, "train")
    browser.find_element(By.ID, "filter").send_keys("x")  # the script ran
    problems = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert problems == []
    resources = browser.execute_script("return performance.getEntriesByType('resource').length")
    assert resources == 0


def test_printed_on_a4_the_table_fits_and_the_controls_go(browser, pages):
    _open(browser, pages, "train", width=794)  # A4 portrait at 96 px per inch
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        shown = browser.execute_script(
            "return ['.tools', '#tip']"
            ".map(s => getComputedStyle(document.querySelector(s)).display)"
        )
        assert shown == ["none", "none"]
        table, inner = browser.execute_script(
            "return [document.getElementById('kernels').getBoundingClientRect().width,"
            " window.innerWidth]"
        )
        assert table <= inner
        options = PrintOptions()
        options.page_width, options.page_height = 21.0, 29.7
        assert base64.b64decode(browser.print_page(options))[:5] == b"%PDF-"
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})

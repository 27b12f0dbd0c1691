#!/usr/bin/python3
"""The web dashboard in a real headless Chromium (Debian's chromium and chromium-driver, driven by
python3-selenium), against a running cluster. dashboard_test.sh starts the cluster and calls:

  dashboard_test.py URL SCREENSHOT_DIR            (environment: ADMIN_TOKEN, USER_TOKEN,
                                                   DROVER_BIN for squeue/sinfo, DROVER_CONF)

It signs in (a bad token first), loads every page, filters the queue and checks the rows against
squeue, clicks through to a job and checks its nodes and GPUs, checks the heat map's per-node
states and GPU counts against sinfo, holds and releases a job as an operator, checks that a
plain user's dashboard is read-only, draws the queue on a phone-sized screen without sideways
scrolling, and saves a screenshot of each page in SCREENSHOT_DIR.

  dashboard_test.py URL SCREENSHOT_DIR --paint    only measures the first paint (bench/)
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

URL, SHOTS = sys.argv[1].rstrip("/"), sys.argv[2]
PAINT_ONLY = "--paint" in sys.argv
ADMIN_TOKEN = os.environ["ADMIN_TOKEN"]
USER_TOKEN = os.environ.get("USER_TOKEN", "")
BIN = os.environ.get("DROVER_BIN", "")
os.makedirs(SHOTS, exist_ok=True)


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def command(*args):
    return subprocess.run([os.path.join(BIN, args[0]) if BIN else args[0], *args[1:]],
                          check=True, capture_output=True, text=True).stdout


def browser(width=1400, height=1000):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions", "--disable-background-networking",
                 f"--window-size={width},{height}", "--lang=en-US"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, what, seconds=20):
    try:
        return WebDriverWait(driver, seconds).until(what)
    except TimeoutException:
        error = driver.find_elements(By.ID, "error")
        text = error[0].text if error else ""
        driver.save_screenshot(os.path.join(SHOTS, "failure.png"))
        fail(f"timed out waiting in {driver.current_url} (page error: {text!r})")


def ready(driver, page):
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready") == page)


def go(driver, hash_):
    driver.execute_script("document.body.dataset.ready = ''; location.hash = arguments[0];", hash_)
    ready(driver, hash_.split("/")[1].split("?")[0])


def sign_in(driver, token, user=""):
    driver.get(URL + "/ui/")
    wait(driver, lambda d: d.find_elements(By.ID, "login-token"))
    driver.find_element(By.ID, "login-token").send_keys(token)
    if user:
        driver.find_element(By.ID, "login-user").send_keys(user)
    driver.find_element(By.ID, "login-button").click()


def shot(driver, name):
    driver.save_screenshot(os.path.join(SHOTS, name + ".png"))


def rows(driver, table):
    return driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")


def api_status(path, token, body=None):
    request = urllib.request.Request(URL + path, method="POST" if body is not None else "GET",
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"X-SLURM-USER-TOKEN": token,
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


if PAINT_ONLY:
    driver = browser()
    try:
        sign_in(driver, ADMIN_TOKEN)  # the token stays in the tab's session storage
        ready(driver, "queue")
        figures = []
        for page in ("queue", "nodes", "scheduler"):
            driver.get("about:blank")
            driver.get(f"{URL}/ui/#/{page}")
            ready(driver, page)
            timing = driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                "return [window.droverFirstReady, n.responseEnd, n.domContentLoadedEventEnd];")
            figures.append(f"{page} {timing[0]:.0f} ms (page loaded {timing[2]:.0f} ms)")
            if page == "nodes":
                cells = len(driver.find_elements(By.CSS_SELECTOR, "#heatmap .node"))
                figures[-1] += f", {cells} nodes drawn"
                shot(driver, "scale-nodes")
        print("first paint with data, from navigation: " + "; ".join(figures))
    finally:
        driver.quit()
    sys.exit(0)

driver = browser()
try:
    # ---- sign-in: a token that is not one is refused, on the page ----
    sign_in(driver, "not-a-token")
    wait(driver, lambda d: d.find_elements(By.ID, "login-message"))
    if "Sign-in failed" not in driver.find_element(By.ID, "login-message").text:
        fail("a bad token did not fail the sign-in")
    shot(driver, "login")
    sign_in(driver, ADMIN_TOKEN)
    ready(driver, "queue")
    if not driver.find_elements(By.ID, "operator-badge"):
        fail("root's dashboard does not say operator")

    # ---- the queue: every job squeue lists, then filtered ----
    squeue = command("squeue", "-h", "-o", "%i %T").split("\n")
    expected = {line.split()[0]: line.split()[1] for line in squeue if line.strip()}
    shown = {r.get_attribute("data-job"): r.find_elements(By.TAG_NAME, "td")[5].text
             for r in rows(driver, "queue-table")}
    if shown != expected:
        fail(f"the queue shows {shown}, squeue {expected}")
    pending = int(driver.find_element(By.CSS_SELECTOR, "#count-pending .value").text)
    if pending != sum(1 for s in expected.values() if s == "PENDING"):
        fail(f"the pending count {pending} is not squeue's")
    shot(driver, "queue")
    driver.find_element(By.ID, "filter-state").send_keys("PENDING")
    driver.find_element(By.ID, "filter-apply").click()
    wait(driver, lambda d: "state=PENDING" in d.current_url)
    ready(driver, "queue")
    filtered = {r.get_attribute("data-job") for r in rows(driver, "queue-table")}
    want = {job for job, state in expected.items() if state == "PENDING"}
    if filtered != want:
        fail(f"state=PENDING shows {filtered}, squeue -t PD {want}")
    go(driver, "#/queue?user=nobody-such")
    if rows(driver, "queue-table") or not driver.find_elements(By.ID, "queue-empty"):
        fail("a filter on an unknown user still shows jobs")

    # ---- a job: click through from the queue ----
    go(driver, "#/queue?state=RUNNING")
    link = driver.find_elements(By.CSS_SELECTOR, "#queue-table a.job-link")
    if not link:
        fail("no running job to click")
    job_id = link[0].text
    link[0].click()
    ready(driver, "job")
    title = driver.find_element(By.ID, "job-title").text
    if not title.startswith(f"Job {job_id}"):
        fail(f"the job page is titled {title!r}")
    nodes = command("squeue", "-h", "-j", job_id, "-o", "%N").strip()
    if driver.find_element(By.ID, "job-nodes").text != nodes:
        fail(f"job {job_id}'s nodes: page {driver.find_element(By.ID, 'job-nodes').text}, squeue {nodes}")
    gpus = rows(driver, "job-gpus")
    tres = command("squeue", "-h", "-j", job_id, "-O", "tres-alloc:200").strip()
    held = re.search(r"gres/gpu=(\d+)", tres)
    if len(gpus) != (int(held.group(1)) if held else 0):
        fail(f"job {job_id}: {len(gpus)} GPU rows, squeue says {tres}")
    if not driver.find_element(By.ID, "job-stdout").text.endswith(f"slurm-{job_id}.out"):
        fail("the job page does not give the output path")
    if not driver.find_elements(By.CSS_SELECTOR, "#job-timeline .bar.run"):
        fail("a running job's timeline has no run bar")
    shot(driver, "job")

    # ---- nodes: the heat map against sinfo ----
    go(driver, "#/nodes")
    sinfo = {}
    for line in command("sinfo", "-h", "-N", "-O", "NodeList:40,StateLong:30,GresUsed:60").split("\n"):
        if line.strip():
            name, state, used = line.split()[:3]
            count = re.search(r"gpu(?::[^:(]+)?:(\d+)", used)
            sinfo[name] = (state.upper().rstrip("*~#$@%!^-+"), int(count.group(1)) if count else 0)
    cells = driver.find_elements(By.CSS_SELECTOR, "#heatmap .node")
    page = {c.get_attribute("data-node"): (c.get_attribute("data-state").upper().rstrip("*~#$@%!^-+"),
                                           int(c.get_attribute("data-gpus-alloc"))) for c in cells}
    if page != sinfo:
        fail(f"the heat map {page} is not sinfo's {sinfo}")
    counts = {e.get_attribute("data-class"): int(e.get_attribute("data-count"))
              for e in driver.find_elements(By.CSS_SELECTOR, "#heatmap-counts [data-class]")}
    drained = sum(1 for state, _ in sinfo.values() if "DRAIN" in state)
    if counts.get("drained", 0) != drained:
        fail(f"the legend counts {counts}, sinfo has {drained} drained")
    if not driver.find_elements(By.CSS_SELECTOR, "#drained-table tr"):
        fail("the drained node is not listed with its reason")
    cells[0].click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#node-detail dl"))
    shot(driver, "nodes")

    # ---- fair share, reservations, scheduler ----
    go(driver, "#/fairshare")
    pairs = set()
    for line in command("sshare", "-a", "-n", "-P", "-o", "Account,User").split("\n"):
        if line.strip():
            account, user = line.strip().split("|")
            pairs.add((account, user))
    shown = {(r.get_attribute("data-account"), r.get_attribute("data-user") or "")
             for r in rows(driver, "shares-table")}
    if shown != pairs:
        fail(f"the fair-share tree shows {sorted(shown)}, sshare -a {sorted(pairs)}")
    shot(driver, "fairshare")
    go(driver, "#/reservations")
    if not driver.find_elements(By.CSS_SELECTOR, "#reservations-table tr[data-reservation]"):
        fail("the reservation is not on the reservations page")
    if not driver.find_elements(By.CSS_SELECTOR, "#reservations-timeline rect"):
        fail("the reservations timeline draws nothing")
    shot(driver, "reservations")
    go(driver, "#/scheduler")
    if not driver.find_elements(By.CSS_SELECTOR, "#queue-chart path"):
        fail("the scheduler page draws no queue history")
    shot(driver, "scheduler")

    # ---- an operator acts: release a held job ----
    held = command("squeue", "-h", "-t", "PD", "-o", "%i %r").split("\n")
    held = [line.split()[0] for line in held if "JobHeld" in line]
    if not held:
        fail("no held job to release")
    go(driver, f"#/job/{held[0]}")
    driver.find_element(By.ID, "job-release").click()
    for _ in range(50):
        if "JobHeld" not in command("squeue", "-h", "-j", held[0], "-o", "%r"):
            break
        time.sleep(0.1)
    else:
        fail(f"the Release button did not release job {held[0]}")
finally:
    driver.quit()

# ---- a phone-sized screen: no sideways scrolling of the page ----
driver = browser(390, 844)
try:
    sign_in(driver, ADMIN_TOKEN)
    ready(driver, "queue")
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 1:
        fail(f"the queue is {overflow}px wider than a phone's screen")
    shot(driver, "phone-queue")
    go(driver, "#/nodes")
    shot(driver, "phone-nodes")
finally:
    driver.quit()

# ---- a user who is not an operator: read-only ----
if USER_TOKEN:
    driver = browser()
    try:
        sign_in(driver, USER_TOKEN)
        ready(driver, "queue")
        if driver.find_elements(By.ID, "operator-badge"):
            fail("a plain user is shown as an operator")
        link = driver.find_elements(By.CSS_SELECTOR, "#queue-table a.job-link")
        if link:
            link[0].click()
            ready(driver, "job")
            if driver.find_elements(By.ID, "job-cancel"):
                fail("a plain user is offered Cancel")
    finally:
        driver.quit()
    some_job = list(expected)[0]
    code = api_status(f"/ui/api/job/{some_job}/cancel", USER_TOKEN, {})
    if code != 403:
        fail(f"a plain user's cancel from the dashboard's API answered {code}, not 403")
print("ok: the dashboard's pages, filters, job page, heat map and actions checked in Chromium")

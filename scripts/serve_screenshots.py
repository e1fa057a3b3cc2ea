"""Screenshots of the `cardenvs serve` page in headless Chromium at 1024x768 and 1920x1080 (docs/serve.md).

    python scripts/serve_screenshots.py [OUT_DIR]     # default docs/; needs chromium, chromedriver, selenium

A RING RANG round and a Rang deal against rules_strong, a few of the person's moves in (seed 5); for each
size it prints where the table and the move buttons end against the window's height, so a layout that
pushes your hand below the fold shows in the numbers as well as in the pictures.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from cardenvs.serve import App, WebGame, make_server

SIZES = ((1024, 768), (1920, 1080))
GAMES = (("ring_rang", {"episode": "round"}, 6), ("rang", {"num_players": 4, "episode": "deal"}, 3))


def browser(width: int, height: int) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    for game, env_kwargs, moves in GAMES:
        app = App(lambda seed, game=game, env_kwargs=env_kwargs: WebGame(game, env_kwargs, 0, ["rules_strong"] * 3,
                                                                         seed), 5)
        server = make_server(app, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        for _ in range(moves):  # a few of the person's moves, so that tricks and piles lie on the table
            state = app.game.state()
            if state["to_act"]:
                app.game.move(state["moves"][0]["action"])
        for width, height in SIZES:
            driver = browser(width, height)
            try:
                driver.get(f"http://127.0.0.1:{server.server_address[1]}/")
                while driver.find_element("tag name", "body").get_attribute("data-busy") != "0":
                    time.sleep(0.05)
                path = out / f"serve_{game}_{width}x{height}.png"
                driver.save_screenshot(str(path))
                table, moves_end, inner = driver.execute_script(
                    "return [document.getElementById('table').getBoundingClientRect().bottom,"
                    " document.getElementById('moves').getBoundingClientRect().bottom, window.innerHeight];")
                print(f"{path}: table ends at {table:.0f} px, the moves at {moves_end:.0f}, window {inner} px high")
            finally:
                driver.quit()
        server.shutdown()


if __name__ == "__main__":
    main()

"""The figures of benches/rounds.sh's rounds, per command name, in milliseconds: each the median
over the rounds of hyperfine's mean and CPU time (user + system), and the lowest minimum."""
import json
import statistics


class Rounds:
    def __init__(self, work, rounds):
        self.per = {}
        for r in range(1, int(rounds) + 1):
            with open(f"{work}/h{r}.json") as f:
                for x in json.load(f)["results"]:
                    self.per.setdefault(x["command"], []).append(x)

    def names(self):
        return list(self.per)

    def _median(self, name, field):
        return statistics.median(field(x) for x in self.per[name]) * 1000

    def mean(self, name):
        return self._median(name, lambda x: x["mean"])

    def cpu(self, name):
        return self._median(name, lambda x: x["user"] + x["system"])

    def median_min(self, name):
        return self._median(name, lambda x: x["min"])

    def low(self, name):
        return min(x["min"] for x in self.per[name]) * 1000

class A:
    def f(self):
        x = 1
        return x + 1

package a.b;

import java.util.List;

/** Doc. */
public final class Box<T> implements Comparable<Box<T>> {
  private final T value;
  @Override
  public int compareTo(Box<T> o) { return 0; }
  record P(int x) { P { if (x < 0) throw new IllegalArgumentException(); } }
  enum E { A, B { void f() {} } }
  String s = """
    text { }
    """;
  Runnable r = () -> { int z = 1; };
}

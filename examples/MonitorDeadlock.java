// MonitorDeadlock - two Java threads synchronize on two objects in opposite
// orders and block for ever entering the second monitor; once the JVM says
// both are BLOCKED, main prints "both blocked, exiting" and calls System.exit.
// The JVM parks a thread entering a held monitor on a condition of its own
// (ObjectMonitor::enter), which ptt sees; who holds the monitor it does not.
public class MonitorDeadlock {
    static final Object A = new Object(), B = new Object();
    public static void main(String[] args) throws Exception {
        Thread t1 = new Thread(() -> { synchronized (A) { pause(); synchronized (B) { } } }, "left");
        Thread t2 = new Thread(() -> { synchronized (B) { pause(); synchronized (A) { } } }, "right");
        t1.setDaemon(true); t2.setDaemon(true);
        t1.start(); t2.start();
        while (t1.getState() != Thread.State.BLOCKED || t2.getState() != Thread.State.BLOCKED)
            Thread.sleep(1);
        System.out.println("both blocked, exiting");
        System.exit(0);
    }
    static void pause() { try { Thread.sleep(100); } catch (InterruptedException e) { } }
}
